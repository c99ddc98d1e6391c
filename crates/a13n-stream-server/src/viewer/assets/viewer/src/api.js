// The host's API as the page calls it: the bearer token the host may require (asked for once, kept for the tab's
// session), sent with every request.
const TOKEN_KEY = "a13n-stream-token";
/** The host asked for a token (401): the page shows the token form. */
export class NeedsToken extends Error {
    name = "NeedsToken";
}
export function token() {
    return sessionStorage.getItem(TOKEN_KEY);
}
export function setToken(value) {
    sessionStorage.setItem(TOKEN_KEY, value);
}
/** The headers every API request carries. */
export function authHeaders(extra = {}) {
    const value = token();
    return value ? { ...extra, Authorization: `Bearer ${value}` } : { ...extra };
}
/** GET a JSON document of the API. */
export async function getJson(path) {
    const response = await fetch(path, { headers: authHeaders({ Accept: "application/json" }) });
    if (response.status === 401)
        throw new NeedsToken("the host needs its bearer token");
    if (!response.ok)
        throw new Error(`${path} answered ${response.status}`);
    return (await response.json());
}
