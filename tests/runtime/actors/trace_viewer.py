#!/usr/bin/python3
"""Opens a strata timeline in Chromium's own trace viewer and checks it loads.

    trace_viewer.py TRACE_TEST

Runs TRACE_TEST (the trace_test binary) with STRATA_TEST_TRACE_KEEP so that
it keeps its trace, starts headless Chromium (Debian's `chromium`), opens
DevTools' bundled front end and hands the file to the trace engine of its
Performance panel (models/trace: the code that parses a JSON trace when a
user loads one there). Checks: the parse succeeds with no warnings, every
worker has its named track, and each track holds as many spans as the file.

Chromium no longer ships chrome://tracing (gone by 156), so the Performance
panel's engine is the viewer a user of this Chromium has. Exit 77 (ctest's
skip) when chromium or python3-websocket is missing, saying so.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

SKIP = 77


def fail(msg):
    print("trace_viewer: FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def start_chromium(profile):
    # The DevTools front end's modules load only on its own origin; a fresh
    # profile keeps the run independent of anything on the machine.
    proc = subprocess.Popen(
        ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--remote-debugging-port=0", "--user-data-dir=" + profile, "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = os.path.join(profile, "DevToolsActivePort")
    for _ in range(300):
        if os.path.exists(port_file):
            text = open(port_file).read().split()
            if text:
                return proc, text[0]
        if proc.poll() is not None:
            fail("chromium exited with %d before it listened" % proc.returncode)
        time.sleep(0.1)
    proc.kill()
    fail("chromium did not open its debugging port within 30 s")


class Page:
    def __init__(self, port):
        import websocket  # python3-websocket
        pages = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port, timeout=10))
        page = next(p for p in pages if p["type"] == "page")
        self.ws = websocket.create_connection(page["webSocketDebuggerUrl"], timeout=120)
        self.next_id = 0

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    fail("%s: %s" % (method, reply["error"]))
                return reply["result"]

    def evaluate(self, expression):
        r = self.call("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in r:
            fail("the page threw: %s" % json.dumps(r["exceptionDetails"])[:2000])
        return r["result"].get("value")


PARSE = """
(async () => {
  const m = await import('./models/trace/trace.js');
  const model = m.TraceModel.Model.createWithAllHandlers();
  await model.parse(%s.traceEvents);
  const data = model.parsedTrace(0).data;
  const tracks = [];
  for (const [pid, p] of data.Renderer.processes)
    for (const [tid, t] of p.threads) tracks.push({tid: Number(tid), name: t.name, entries: t.entries.length});
  return JSON.stringify({warnings: data.Warnings.perEvent.size ?? data.Warnings.perEvent.length,
                         bounds: data.Meta.traceBounds.range, tracks: tracks});
})()
"""


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    if shutil.which("chromium") is None:
        print("trace_viewer: SKIP: no chromium (Debian package chromium)")
        sys.exit(SKIP)
    try:
        import websocket  # noqa: F401
    except ImportError:
        print("trace_viewer: SKIP: no python3-websocket (Debian package) for /usr/bin/python3")
        sys.exit(SKIP)
    work = tempfile.mkdtemp(prefix="strata-trace-viewer-")
    trace = os.path.join(work, "trace.json")
    env = dict(os.environ, STRATA_TEST_TRACE_KEEP=trace)
    subprocess.run([sys.argv[1], "--gtest_filter=Trace.TheFileMatchesStats"], env=env, check=True)
    doc = json.load(open(trace))
    spans = {}
    names = {}
    for e in doc["traceEvents"]:
        if e["ph"] == "X":
            spans[e["tid"]] = spans.get(e["tid"], 0) + 1
        elif e["ph"] == "M" and e["name"] == "thread_name":
            names[e["tid"]] = e["args"]["name"]
    proc, port = start_chromium(os.path.join(work, "profile"))
    try:
        page = Page(port)
        page.call("Page.navigate", url="devtools://devtools/bundled/devtools_app.html")
        for _ in range(100):
            if page.evaluate("document.readyState") == "complete":
                break
            time.sleep(0.1)
        result = json.loads(page.evaluate(PARSE % json.dumps(doc)))
    finally:
        proc.kill()
        proc.wait()
    print("trace_viewer: Chromium's trace engine: %d warning(s), %.0f us, tracks %s"
          % (result["warnings"], result["bounds"], result["tracks"]))
    if result["warnings"] != 0:
        fail("the trace engine reported warnings")
    by_tid = {t["tid"]: t for t in result["tracks"]}
    for tid, n in spans.items():
        if tid not in by_tid:
            fail("thread %d (%s) has no track" % (tid, names.get(tid)))
        if by_tid[tid]["name"] != names.get(tid):
            fail("thread %d is named %r in the viewer, %r in the file" % (tid, by_tid[tid]["name"], names.get(tid)))
        if by_tid[tid]["entries"] != n:
            fail("thread %d: %d spans in the viewer, %d in the file" % (tid, by_tid[tid]["entries"], n))
    shutil.rmtree(work, ignore_errors=True)
    print("trace_viewer: OK: %d spans on %d tracks" % (sum(spans.values()), len(spans)))


main()
