"""The report page in a real headless browser (Debian's chromium, driven over the DevTools
protocol on a pipe): a 45-job MolP2S sweep and a sweep over the other families load with no
console error and every figure rendered. The screenshot goes to pytest's tmp dir, never to git."""

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
    pytest.importorskip("matplotlib")
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


def render(page: Path, tmp: Path, shot: Path) -> tuple[list[dict], list[str]]:
    browser = Browser(chromium(), tmp / "profile")
    try:
        target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Runtime", "Log", "Page"):
            browser.send(f"{domain}.enable", session=session)
        browser.send("Page.navigate", {"url": page.as_uri()}, session=session)
        browser.wait(lambda m: m.get("method") == "Page.loadEventFired")
        value = browser.send(
            "Runtime.evaluate", {"expression": FIGURES_JS, "returnByValue": True}, session=session
        )
        figures = json.loads(value["result"]["value"])
        data = browser.send("Page.captureScreenshot", {"format": "png"}, session=session)
        shot.write_bytes(base64.b64decode(data["data"]))
        errors = []
        for event in browser.events:
            params = event.get("params", {})
            method = event["method"]
            console_error = method == "Runtime.consoleAPICalled" and params.get("type") in (
                "error",
                "assert",
            )
            if method == "Runtime.exceptionThrown" or console_error:
                errors.append(json.dumps(params)[:300])
            elif event["method"] == "Log.entryAdded" and params["entry"]["level"] == "error":
                errors.append(params["entry"].get("text", ""))
        return figures, errors
    finally:
        browser.close()


def check_page(sweep: Path, tmp: Path, expected: set[str]) -> None:
    page = sweep / "report" / "index.html"
    assert page.is_file()
    text = page.read_text()
    assert "http://" not in text and "https://" not in text
    figures, errors = render(page, tmp, tmp / f"{sweep.name}.png")
    assert errors == []
    assert len(figures) == len(list((sweep / "report" / "figures").glob("*.svg")))
    assert {f["src"] for f in figures} == {"data:image/svg+xml;base64,"}
    for figure in figures:
        assert figure["complete"] and figure["w"] > 100 and figure["h"] > 50, figure
        assert figure["shown"] > 100, figure
    names = {p.stem for p in (sweep / "report" / "figures").glob("*.svg")}
    assert expected <= names, names
    assert (tmp / f"{sweep.name}.png").stat().st_size > 10_000


def test_molp2s_45_job_sweep_report_renders(cli, tmp_path: Path) -> None:
    chromium()
    sweep = tmp_path / "molp2s"
    proc = cli(
        "-m",
        "task=glob(molp2s/*)",
        "view=correct,shuffled,counterfactual",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert len(list(sweep.glob("*/metrics.json"))) == 45
    check_page(sweep, tmp_path, {"primary_molp2s", "molp2s_analysis"})


def test_other_families_report_renders(cli, tmp_path: Path) -> None:
    chromium()
    sweep = tmp_path / "families"
    proc = cli(
        "-m",
        "task=glob([cblue/*,reaction_mc/*_reference*,retrieval/*])",
        "model=baseline",
        f"hydra.sweep.dir={sweep}",
    )
    assert proc.returncode in (0, 2), proc.stderr[-2000:]
    check_page(
        sweep,
        tmp_path,
        {"primary_cblue", "cblue_analysis", "reaction_mc_analysis", "retrieval_gates"},
    )
