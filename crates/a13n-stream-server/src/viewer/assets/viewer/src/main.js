// The run viewer's entry: `/` lists the runs, `/runs/{run_id}` follows one, `/threads/{thread_id}` follows every
// run of a thread as one conversation. Served by `a13n-stream serve` as
// ES modules under a strict Content-Security-Policy (`script-src 'self'`); no build step at run time: this file
// and the modules it imports are compiled from TypeScript (js/viewer) and embedded in the binary.
import { setToken, token } from "./api.js";
import { byId } from "./dom.js";
import { showRun } from "./run.js";
import { showRuns } from "./runs.js";
import { showThread } from "./thread.js";
function setConnection(text) {
    byId("connection").textContent = text;
}
let countdown = 0;
/** Say the host cannot be reached, counting down to the next try (`null`: it can be again). The page's figures
 * are marked stale meanwhile. */
function offline(retryInMs) {
    const notice = byId("offline");
    window.clearInterval(countdown);
    document.body.dataset["offline"] = String(retryInMs !== null);
    if (retryInMs === null) {
        notice.hidden = true;
        return;
    }
    const until = Date.now() + retryInMs;
    const tick = () => {
        const left = Math.ceil((until - Date.now()) / 1000);
        notice.textContent = `The host cannot be reached: what is shown may be out of date. ${left > 0 ? `Trying again in ${left} s…` : "Trying again…"}`;
    };
    tick();
    countdown = window.setInterval(tick, 1000);
    notice.hidden = false;
}
/** What to do once the reader gave a token: the request that was refused, again. */
let retry = null;
function needsToken(again) {
    retry = again;
    // A token given before was refused: say so, rather than ask again as if none had been given.
    const refused = token() !== null;
    byId("token-label").textContent = refused
        ? "The host refused that token: enter its bearer token"
        : "This host needs its bearer token";
    byId("token-form").dataset["refused"] = String(refused);
    setConnection(refused ? "token refused" : "token needed");
    byId("token-form").hidden = false;
    byId("token").focus();
}
byId("token-form").addEventListener("submit", (event) => {
    event.preventDefault();
    setToken(byId("token").value);
    byId("token-form").hidden = true;
    const again = retry;
    retry = null;
    again?.();
});
const hooks = {
    setConnection,
    needsToken,
    offline,
    live: () => {
        setConnection("live");
        offline(null);
    },
};
const path = location.pathname;
if (path.startsWith("/runs/"))
    showRun(decodeURIComponent(path.slice("/runs/".length)), hooks);
else if (path.startsWith("/threads/"))
    showThread(decodeURIComponent(path.slice("/threads/".length)), hooks);
else
    void showRuns(hooks);
