// a13n-stream-display: a run's display items in the browser, from a host's checkpoint and its later entries.

export { DisplayNormalizer, type RestoreOptions } from "./normalizer.js";
export { DisplayError, type DisplayErrorKind } from "./errors.js";
export { follow, FollowError, frames, type Change, type Follower, type FollowOptions, type Frame } from "./follow.js";
export { itemId, MAX_FIELD_CHARS, MAX_OBSERVATION_BYTES } from "./fold.js";
export { FRAGMENT_EVENT_NAME } from "./fragments.js";
export type { Clock } from "./time.js";
export type * from "./types.js";
