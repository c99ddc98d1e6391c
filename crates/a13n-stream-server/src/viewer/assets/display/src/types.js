// The display checkpoint and the live entries as they travel between a host and a browser: the Python
// reference's `DisplaySnapshot`, `Item`, `ItemRef` and `Observed`, field for field.
export {};
