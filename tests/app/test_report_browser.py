"""The report pages in a real headless browser (Debian's chromium, driven over the DevTools
protocol on a pipe): the 60-job MolP2S sweep and a sweep over the other families load with no
console error, no request, every figure rendered, each family's headline above the figures and
no table wider than the window; the sample browser filters, searches and opens a sample among
15,000. Screenshots go to pytest's tmp dir, never to git."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--remote-debugging-pipe",
]
WIDTH = 1280  # a desktop browser window
FIGURES_JS = """JSON.stringify(Array.from(document.querySelectorAll('img.figure')).map(i => ({
  alt: i.alt, complete: i.complete, w: i.naturalWidth, h: i.naturalHeight,
  shown: i.getBoundingClientRect().width, src: i.src.slice(0, 26)})))"""


def chromium() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        reason = "chromium not installed (apt-get install -y chromium)"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason}; .ci/run installs it")
        pytest.skip(reason)
    pytest.importorskip("pygal")
    return path


class Browser:
    """Just enough of the DevTools protocol over --remote-debugging-pipe (fd 3 in, fd 4 out)."""

    def __init__(self, binary: str, profile: Path) -> None:
        self.proc = subprocess.Popen(
            [
                "sh",
                "-c",
                'exec "$@" 3<&0 4>&1 </dev/null >/dev/null',
                "sh",
                binary,
                *FLAGS,
                f"--user-data-dir={profile}",
                "about:blank",
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.buffer = b""
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        self.next_id += 1
        message: dict[str, Any] = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\0")
        self.proc.stdin.flush()
        reply = self.wait(lambda m: m.get("id") == self.next_id)
        assert "error" not in reply, reply
        return reply.get("result", {})

    def wait(self, done, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while True:
            while b"\0" in self.buffer:
                raw, self.buffer = self.buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "method" in message:
                    self.events.append(message)
                if done(message):
                    return message
            left = deadline - time.monotonic()
            assert left > 0, "the browser did not answer in time"
            if select.select([fd], [], [], left)[0]:
                chunk = os.read(fd, 1 << 20)
                assert chunk, "the browser closed the pipe"
                self.buffer += chunk

    def close(self) -> None:
        with contextlib.suppress(AssertionError, OSError):
            self.send("Browser.close")
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Page:
    """One page open in headless Chromium at a desktop size, with what it logged and every
    request it made."""

    def __init__(self, browser: Browser, url: str, width: int = WIDTH, height: int = 900) -> None:
        self.browser = browser
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Runtime", "Log", "Page", "Network"):
            browser.send(f"{domain}.enable", session=self.session)
        browser.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=self.session,
        )
        browser.send("Page.navigate", {"url": url}, session=self.session)
        browser.wait(lambda m: m.get("method") == "Page.loadEventFired")
        self.url = url

    def js(self, expression: str) -> Any:
        """The value of a JavaScript expression (a promise is awaited); JSON-able values."""
        reply = self.browser.send(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=self.session,
        )
        assert "exceptionDetails" not in reply, reply
        return reply["result"].get("value")

    def screenshot(self, path: Path) -> Path:
        """The whole page (not only the window), as PNG."""
        size = self.browser.send("Page.getLayoutMetrics", session=self.session)["cssContentSize"]
        clip = {"x": 0, "y": 0, "width": WIDTH, "height": min(size["height"], 16000), "scale": 1}
        data = self.browser.send(
            "Page.captureScreenshot",
            {"format": "png", "captureBeyondViewport": True, "clip": clip},
            session=self.session,
        )
        path.write_bytes(base64.b64decode(data["data"]))
        return path

    def errors(self) -> list[str]:
        found = []
        for event in self.browser.events:
            params = event.get("params", {})
            method = event["method"]
            console_error = method == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "assert",
            )
            if method == "Runtime.exceptionThrown" or console_error:
                found.append(json.dumps(params)[:300])
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(params["entry"].get("text", ""))
        return found

    def requests(self) -> list[str]:
        """Every URL the page asked for but itself and its inline data: URIs."""
        urls = [
            e["params"]["request"]["url"]
            for e in self.browser.events
            if e["method"] == "Network.requestWillBeSent"
        ]
        return [u for u in urls if u != self.url and not u.startswith("data:")]


@contextlib.contextmanager
def opened(page: Path, tmp: Path):
    browser = Browser(chromium(), tmp / "profile")
    try:
        yield Page(browser, page.as_uri())
    finally:
        browser.close()


LAYOUT_JS = """JSON.stringify({
  scroll: document.documentElement.scrollWidth, inner: window.innerWidth,
  tables: Array.from(document.querySelectorAll('table')).map(t => t.getBoundingClientRect().right),
  headline: (document.querySelector('section.headline') || {offsetTop: -1}).offsetTop,
  firstFigure: (document.querySelector('figure') || {offsetTop: 1e9}).offsetTop,
  counts: (document.querySelector('table.counts') || {offsetTop: -1}).offsetTop,
  samplesLink: !!document.querySelector('a[href="samples.html"]')})"""


def check_page(sweep: Path, tmp: Path, expected: set[str], headlines: set[str]) -> Path:
    """The report page: no console error, no request, every figure rendered, each family's
    headline above the figures, every table inside the page's width; returns its screenshot."""
    page = sweep / "report" / "index.html"
    assert page.is_file()
    text = page.read_text()
    assert "http://" not in text and "https://" not in text
    with opened(page, tmp) as view:
        figures = json.loads(view.js(FIGURES_JS))
        layout = json.loads(view.js(LAYOUT_JS))
        titles = view.js(
            "Array.from(document.querySelectorAll('section.headline h2')).map(h => h.textContent)"
        )
        shot = view.screenshot(tmp / f"{sweep.name}.png")
        assert view.errors() == []
        assert view.requests() == []
    assert len(figures) == len(list((sweep / "report" / "figures").glob("*.svg")))
    assert {f["src"] for f in figures} == {"data:image/svg+xml;base64,"}
    for figure in figures:
        assert figure["complete"] and figure["w"] > 100 and figure["h"] > 50, figure
        assert figure["shown"] > 100, figure
    names = {p.stem for p in (sweep / "report" / "figures").glob("*.svg")}
    assert expected <= names, names
    # the answer first: the headlines above every figure; nothing scrolls sideways
    assert all(any(t.startswith(h) for t in titles) for h in headlines), titles
    assert 0 <= layout["headline"] < layout["firstFigure"], layout
    assert layout["scroll"] <= layout["inner"], layout
    assert all(right <= layout["inner"] for right in layout["tables"]), layout
    assert layout["counts"] > 0 and layout["samplesLink"], layout
    assert shot.stat().st_size > 10_000
    return shot


def test_molp2s_60_job_sweep_report_renders(cli, tmp_path: Path) -> None:
    """The acceptance sweep of issue 21: every MolP2S task x the four views."""
    chromium()
    sweep = tmp_path / "molp2s"
    proc = cli(
        "-m",
        "task=glob(molp2s/*)",
        "view=correct,shuffled,counterfactual,structure_only",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(list(sweep.glob("*/metrics.json"))) == 60
    last_screen = "\n".join(proc.stdout.splitlines()[-50:])
    assert "MolP2S: accuracy by view and the use-claim verdict" in last_screen
    assert "supported" in last_screen and "(b) " in last_screen
    check_page(sweep, tmp_path, {"primary_molp2s", "molp2s_analysis"}, {"MolP2S: accuracy"})
    with opened(sweep / "report" / "samples.html", tmp_path) as view:
        jobs = view.js("document.querySelectorAll('#job option').length")
        count = view.js("document.getElementById('count').textContent")
        assert view.errors() == [] and view.requests() == []
    assert jobs == 61  # every job, and "every job"
    total = sum(len(f.read_text().splitlines()) for f in sweep.glob("*/samples.jsonl"))
    assert count == f"{total} of {total} samples"


def test_other_families_report_renders(families_sweep: Path, tmp_path: Path) -> None:
    chromium()
    check_page(
        families_sweep,
        tmp_path,
        {"primary_cblue", "cblue_analysis", "reaction_mc_analysis", "retrieval_gates"},
        {"PromptCBLUE", "Reaction-condition MC", "Retrieval"},
    )


# --- the sample browser (issue 21, item 2) -------------------------------------------------

STATUSES = ("ok", "ok", "ok", "invalid", "missing", "error", "out_of_range")


def big_sweep(root: Path, jobs: int = 3, per_job: int = 5000) -> Path:
    """A sweep of ``jobs`` x ``per_job`` samples with every status, messages on some, long
    outputs on others (15,000 samples by default)."""
    from tests.app.test_report import write_job

    for j in range(jobs):
        folder = write_job(root, f"{j:03d}_t-x_v_m{j}", "t/x", "v", f"m{j}", [1.0] * per_job)
        rows = []
        for i in range(per_job):
            status = STATUSES[i % len(STATUSES)]
            row = {
                "id": f"s{j}-{i}",
                "raw_output": ("long answer " * 400) if i % 50 == 0 else f"answer {i}",
                "answer": i % 5 if status == "ok" else None,
                "gold": i % 3,
                "status": status,
                "score": 1.0 if status == "ok" and i % 5 == i % 3 else 0.0,
            }
            if i % 10 == 0:
                row["messages"] = [
                    {"role": "system", "content": "You answer."},
                    {"role": "user", "content": f"question {i} <b>not bold</b> </script>"},
                ]
            rows.append(json.dumps(row))
        (folder / "samples.jsonl").write_text("\n".join(rows) + "\n")
    return root


def test_the_sample_browser_filters_searches_and_opens_a_sample(tmp_path: Path) -> None:
    chromium()
    from benchreg.app.commands import main as command_main

    sweep = big_sweep(tmp_path / "sweep")
    started = time.monotonic()
    assert command_main(["view", str(sweep)]) == 0
    page = sweep / "report" / "samples.html"
    assert page.is_file() and time.monotonic() - started < 30
    text = page.read_text()
    assert "http://" not in text and "https://" not in text and "</script> " not in text
    with opened(page, tmp_path) as view:
        count = lambda: view.js("document.getElementById('count').textContent")  # noqa: E731
        rows = lambda: view.js("document.querySelectorAll('#rows tr').length")  # noqa: E731
        assert count() == "15000 of 15000 samples" and rows() == 100  # one page of 100
        # a status filter changes the rows shown
        view.js("document.querySelector('#statuses input[value=ok]').click()")
        not_ok = sum(STATUSES[i % len(STATUSES)] != "ok" for i in range(5000)) * 3
        assert count() == f"{not_ok} of 15000 samples" and rows() == 100
        shown = view.js(
            "Array.from(document.querySelectorAll('#rows tr td:nth-child(3)'))"
            ".map(td => td.textContent)"
        )
        assert shown and "ok" not in shown, shown
        view.js("document.querySelector('#statuses input[value=ok]').click()")
        # searching narrows the rows to the matching sample
        view.js(
            "(() => { const q = document.getElementById('q'); q.value = 's1-4242';"
            "q.dispatchEvent(new Event('input')); return new Promise(r => setTimeout(r, 400));"
            "})()"
        )
        assert count() == "1 of 15000 samples" and rows() == 1
        # a click opens it: its id, status, raw output and gold beside the list
        view.js("document.querySelector('#rows tr').click()")
        detail = view.js(
            "document.getElementById('detail').hidden ? null : "
            "document.getElementById('detail').innerText"
        )
        assert detail is not None and "s1-4242" in detail and "answer 4242" in detail
        # a long text is folded, the messages shown as text (never as markup)
        view.js(
            "(() => { const q = document.getElementById('q'); q.value = 's0-0';"
            "q.dispatchEvent(new Event('input')); return new Promise(r => setTimeout(r, 400));"
            "})()"
        )
        view.js("document.querySelector('#rows tr').click()")
        assert view.js("document.querySelectorAll('#detail pre.folded').length") >= 1
        assert "<b>not bold</b>" in view.js("document.getElementById('detail').innerText")
        view.screenshot(tmp_path / "samples.png")
        assert view.errors() == [] and view.requests() == []
