"""The sample browser: one self-contained HTML page listing every sample of a sweep's jobs (or of
one run) with its status, score, the rendered messages (when samples.jsonl or the folder's
prompts.jsonl holds them), the raw output, the parsed answer and the gold.

No network and no server: the samples are embedded as JSON in the page and a small script lays
them out, 100 rows a page, filtered by job, status and score and searched as you type; a sample
opens beside the list on click (its address, `#sample=<job>/<id>`, can be shared). Long texts
are folded; a text longer than :data:`MAX_TEXT` characters is cut in the page (samples.jsonl
keeps it whole). A Content-Security-Policy forbids every request the page could make.

Written to `<sweep>/report/samples.html` with every report, and by `python -m benchreg view
<sweep or run folder>`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from benchreg.core.io import atomic_write_parts
from benchreg.core.reader import json_lines

SAMPLES_PAGE = "samples.html"
PROMPTS_FILE = "prompts.jsonl"
MAX_TEXT = 20_000  # characters of one text shown in the page; the rest is cut with a note
ROW_KEYS = {"id", "status", "score", "raw_output", "answer", "gold", "degraded", "messages"}


@dataclass
class BrowserJob:
    """One job of the page: its folder name, what it ran, its state and its samples' rows."""

    name: str
    state: str
    task: str = ""
    view: str | None = None
    model: str = ""
    error: str | None = None
    rows: Sequence[Mapping[str, Any]] = field(default_factory=list)
    folder: Path | None = None


def _cut(text: str) -> str:
    if len(text) <= MAX_TEXT:
        return text
    return (
        f"{text[:MAX_TEXT]}\n… [cut at {MAX_TEXT} of {len(text)} characters here; samples.jsonl "
        "holds all of it]"
    )


def _value(value: Any) -> Any:
    """A JSON value for the page: strings cut, a large structure replaced by its cut text."""
    kind = type(value)
    if kind is str:
        return value if len(value) <= MAX_TEXT else _cut(value)
    if value is None or kind is float or kind is int or kind is bool:
        return value
    if isinstance(value, str):
        return _cut(value)
    if isinstance(value, dict | list):
        try:  # UTF-8 bytes: never fewer than the characters `json` writes
            if len(orjson.dumps(value)) <= MAX_TEXT:
                return value
        except (orjson.JSONEncodeError, TypeError):
            pass
        text = json.dumps(value, ensure_ascii=False)
        return value if len(text) <= MAX_TEXT else {"(cut)": _cut(text)}
    return value


def _shown(row: Mapping[str, Any]) -> Callable[[Any], Any]:
    """How a row's values go on the page: as they are when the row's whole JSON is within
    :data:`MAX_TEXT` (each value's JSON is a part of it, and no shorter than its text), else
    each through :func:`_value`."""
    try:
        return _as_it_is if len(orjson.dumps(row)) <= MAX_TEXT else _value
    except (orjson.JSONEncodeError, TypeError):
        return _value


def _as_it_is(value: Any) -> Any:
    return value


def _messages(value: Any) -> list[dict[str, str]] | None:
    if not isinstance(value, list):
        return None
    out = []
    for m in value:
        if isinstance(m, Mapping):
            out.append({"role": str(m.get("role", "")), "content": _cut(str(m.get("content", "")))})
    return out or None


def _row_messages(row: Mapping[str, Any]) -> Any:
    """The rendered messages of one row: a model run's samples.jsonl keeps them under
    ``metadata.messages`` (with the request key they were sent under), a prompts row at the
    top."""
    metadata = row.get("metadata")
    if row.get("messages") is None and isinstance(metadata, Mapping):
        return metadata.get("messages")
    return row.get("messages")


def _without_messages(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """The row without ``metadata.messages``, which the page shows as the prompt (listing them
    again among the other fields would double the page)."""
    metadata = row.get("metadata")
    if not isinstance(metadata, Mapping) or "messages" not in metadata:
        return row
    rest = {k: v for k, v in metadata.items() if k != "messages"}
    return {**row, "metadata": rest} if rest else {k: v for k, v in row.items() if k != "metadata"}


def _prompts(folder: Path | None) -> dict[str, Any]:
    """The rendered messages of a folder's prompts.jsonl (mode=prompts), by sample id."""
    path = folder / PROMPTS_FILE if folder is not None else None
    if path is None or not path.is_file():
        return {}
    found: dict[str, Any] = {}
    try:
        for _, row, _ in json_lines(path):
            if isinstance(row, Mapping) and "id" in row:
                found[str(row["id"])] = row.get("messages")
    except Exception:  # a damaged prompts file only loses the messages
        return {}
    return found


def page_data(jobs: Sequence[BrowserJob], title: str) -> dict[str, Any]:
    """What the page embeds: the jobs and one compact row per sample (j: job index, i: id,
    s: status, c: score, d: degraded, m: messages, r: raw output, a: answer, g: gold,
    x: everything else the row holds)."""
    samples = []
    for j, job in enumerate(jobs):
        messages = _prompts(job.folder)
        for row in job.rows:
            sample_id = str(row.get("id"))
            value = _shown(row)
            entry: dict[str, Any] = {
                "j": j,
                "i": sample_id,
                "s": str(row.get("status") or ""),
                "c": row.get("score"),
                "r": value(row.get("raw_output")),
                "a": value(row.get("answer")),
                "g": value(row.get("gold")),
            }
            if row.get("degraded"):
                entry["d"] = _value(str(row["degraded"]))
            shown = _messages(_row_messages(row)) or _messages(messages.get(sample_id))
            if shown:
                entry["m"] = shown
            extra = {k: value(v) for k, v in _without_messages(row).items() if k not in ROW_KEYS}
            if extra:
                entry["x"] = extra
            samples.append(entry)
    return {
        "title": title,
        "jobs": [
            {
                "name": job.name,
                "state": job.state,
                "task": job.task,
                "view": job.view,
                "model": job.model,
                "error": job.error,
                "n": len(job.rows),
            }
            for job in jobs
        ],
        "samples": samples,
    }


def _script_json(data: Any) -> str:
    """JSON safe inside a <script> element (no `</script>`, no `<!--`)."""
    return _script_bytes(data).decode("utf-8")


def _script_bytes(data: Any) -> bytes:
    """:func:`_script_json` as UTF-8 bytes (a large page is never copied into a str)."""
    text = _compact(data)
    return text.replace(b"<", b"\\u003c").replace(b">", b"\\u003e").replace(b"&", b"\\u0026")


def _compact(data: Any) -> bytes:
    """Compact JSON, NaN and infinities as null (orjson writes them so; `json`, for what orjson
    does not encode, after :func:`_finite`)."""
    try:
        return orjson.dumps(data)
    except orjson.JSONEncodeError:
        text = json.dumps(_finite(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")


def _finite(data: Any) -> Any:
    """NaN and infinities (not JSON) as null."""
    if isinstance(data, float) and (data != data or data in (float("inf"), float("-inf"))):
        return None
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_finite(v) for v in data]
    return data


def render(jobs: Sequence[BrowserJob], title: str, back: str | None = None) -> str:
    """The page's HTML. ``back``: a relative link to the report it belongs to."""
    return b"".join(_page_parts(jobs, title, back)).decode("utf-8")


def _page_parts(
    jobs: Sequence[BrowserJob], title: str, back: str | None = None
) -> tuple[bytes, bytes, bytes]:
    """The page as UTF-8 bytes: the HTML before the data, the data, the HTML after it."""
    import html

    data = _script_bytes(page_data(jobs, title))
    link = f'<a href="{html.escape(back)}">report</a> · ' if back else ""
    head, _, tail = PAGE.partition("__DATA__")
    head = head.replace("__TITLE__", html.escape(title)).replace("__BACK__", link)
    return head.encode("utf-8"), data, tail.encode("utf-8")


def write_browser(
    path: Path, jobs: Sequence[BrowserJob], title: str, back: str | None = None
) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_parts(path, _page_parts(jobs, title, back), durable=False)  # made again by `view`
    return path


def sweep_jobs(states: Iterable[Any], records: Mapping[str, Any]) -> list[BrowserJob]:
    """Browser jobs from the report's jobs (``states``: objects with name, state, record, error,
    model, task) and ``records``: job name -> :class:`benchreg.core.analysis.JobRecord`."""
    out = []
    for job in states:
        found = records.get(job.name)
        record = job.record or {}
        out.append(
            BrowserJob(
                name=job.name,
                state=job.state,
                task=str(record.get("task") or ""),
                view=record.get("view"),
                model=job.model,
                error=job.error,
                rows=found.samples if found is not None else [],
                folder=found.dir if found is not None else None,
            )
        )
    return out


CSS = """
* { box-sizing: border-box; }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1b1b1b;
       font-size: 14px; }
header { padding: .8rem 1.2rem .4rem; border-bottom: 1px solid #ddd; }
h1 { font-size: 1.25rem; margin: 0 0 .3rem; }
.small { font-size: .8rem; color: #555; }
.controls { display: flex; flex-wrap: wrap; gap: .5rem 1rem; align-items: center;
            padding: .5rem 1.2rem; background: #f7f7f7; border-bottom: 1px solid #ddd; }
.controls input[type=search] { width: 22rem; max-width: 100%; padding: .3rem .4rem; }
.controls select { max-width: 28rem; }
.controls label { white-space: nowrap; }
main { display: flex; align-items: flex-start; }
#list { flex: 1 1 auto; min-width: 0; padding: .5rem 1.2rem; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; font-size: .8rem; }
th, td { border: 1px solid #ddd; padding: .2rem .4rem; text-align: left; vertical-align: top;
         overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
th { background: #f0f0f0; }
tbody tr { cursor: pointer; }
tbody tr:hover td { background: #eef4ff; }
tbody tr.open td { background: #dce8ff; }
col.c-job { width: 22%; } col.c-id { width: 14%; } col.c-status { width: 6.5rem; }
col.c-score { width: 4.5rem; } col.c-answer { width: 25%; } col.c-gold { width: 25%; }
.st { display: inline-block; padding: 0 .35rem; border-radius: .6rem; font-size: .75rem; }
.st-ok { background: #e3f4e1; } .st-missing, .st-error { background: #fde2e1; }
.st-invalid, .st-out_of_range { background: #fff0c8; }
.pager { display: flex; gap: .6rem; align-items: center; margin: .6rem 0; }
#detail { flex: 0 0 46%; max-width: 46%; position: sticky; top: 0; max-height: 100vh;
          overflow: auto; border-left: 1px solid #ccc; padding: .6rem 1rem; background: #fff; }
#detail[hidden] { display: none; }
#detail h2 { font-size: 1rem; margin: .2rem 0 .5rem; overflow-wrap: anywhere; }
#detail h3 { font-size: .85rem; margin: .9rem 0 .25rem; color: #333; }
#detail dl { display: grid; grid-template-columns: max-content 1fr; gap: .1rem .8rem;
             margin: 0; font-size: .8rem; }
#detail dd { margin: 0; overflow-wrap: anywhere; }
pre { white-space: pre-wrap; overflow-wrap: anywhere; background: #f6f6f6;
      border: 1px solid #e3e3e3; padding: .4rem .5rem; margin: 0; font-size: .78rem; }
pre.folded { max-height: 11em; overflow: hidden; }
button.fold { margin: .2rem 0; font-size: .75rem; }
.msg-role { font-weight: 600; font-size: .75rem; text-transform: uppercase; color: #555;
            margin-top: .4rem; }
.empty { color: #777; font-style: italic; }
"""

SCRIPT = r"""
"use strict";
const DATA = JSON.parse(document.getElementById("benchreg-data").textContent);
const PAGE = 100, FOLD = 600;
const $ = (id) => document.getElementById(id);
const el = (tag, attrs, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") e.className = v; else if (k === "text") e.textContent = v;
    else e.setAttribute(k, v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
};
const show = (v) => v === null || v === undefined ? "" :
  typeof v === "string" ? v : JSON.stringify(v, null, 2);
const brief = (v) => {
  const t = show(v).replace(/\s+/g, " ");
  return t.length > 120 ? t.slice(0, 119) + "…" : t;
};
const score = (c) => typeof c === "number" ? (Number.isInteger(c) ? String(c) : c.toFixed(4)) : "–";
const samples = DATA.samples, jobs = DATA.jobs;
let hay = null, shown = [], page = 0, openIndex = -1;

function statuses() {
  const counts = {};
  for (const s of samples) counts[s.s] = (counts[s.s] || 0) + 1;
  const order = ["ok", "missing", "invalid", "out_of_range", "error"];
  return Object.keys(counts).sort((a, b) => (order.indexOf(a) + 99 * (order.indexOf(a) < 0)) -
    (order.indexOf(b) + 99 * (order.indexOf(b) < 0))).map((s) => [s, counts[s]]);
}

function setup() {
  document.title = DATA.title;
  const jobSelect = $("job");
  jobSelect.append(el("option", {value: "", text: `every job (${jobs.length})`}));
  jobs.forEach((j, i) => {
    const what = [j.task, j.view, j.model].filter(Boolean).join(" · ");
    const state = j.state === "ok" ? "" : ` [${j.state}]`;
    const text = `${j.name} (${j.n})${state}${what ? " — " + what : ""}`;
    jobSelect.append(el("option", {value: String(i), text}));
  });
  const box = $("statuses");
  for (const [s, n] of statuses()) {
    const input = el("input", {type: "checkbox", value: s, checked: "checked", "data-status": s});
    input.addEventListener("change", refilter);
    box.append(el("label", {}, input, ` ${s} (${n})`));
  }
  let timer = null;
  $("q").addEventListener("input", () => {
    clearTimeout(timer);
    timer = setTimeout(refilter, 150);
  });
  $("job").addEventListener("change", refilter);
  $("score").addEventListener("change", refilter);
  $("prev").addEventListener("click", () => { if (page > 0) { page--; draw(); } });
  $("next").addEventListener("click", () => {
    if ((page + 1) * PAGE < shown.length) { page++; draw(); }
  });
  $("close").addEventListener("click", closeDetail);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") closeDetail(); });
  const failed = jobs.filter((j) => j.state !== "ok");
  if (failed.length) {
    const line = (j) => `${j.name}: ${j.state}${j.error ? " — " + j.error : ""}`;
    $("jobnotes").textContent = failed.map(line).join("\n");
    $("jobnotes").hidden = false;
  }
  refilter();
  fromHash();
}

function haystack(i) {
  if (hay === null) hay = new Array(samples.length);
  if (hay[i] === undefined) {
    const s = samples[i];
    hay[i] = [s.i, show(s.r), show(s.a), show(s.g), show(s.d),
      (s.m || []).map((m) => m.content).join("\n")].join("\n").toLowerCase();
  }
  return hay[i];
}

function refilter() {
  const q = $("q").value.trim().toLowerCase();
  const job = $("job").value;
  const checked = document.querySelectorAll("#statuses input:checked");
  const allowed = new Set([...checked].map((x) => x.value));
  const sc = $("score").value;
  shown = [];
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    if (job !== "" && String(s.j) !== job) continue;
    if (!allowed.has(s.s)) continue;
    if (sc === "zero" && s.c !== 0) continue;
    if (sc === "positive" && !(typeof s.c === "number" && s.c > 0)) continue;
    if (sc === "none" && typeof s.c === "number") continue;
    if (q && !haystack(i).includes(q)) continue;
    shown.push(i);
  }
  page = 0;
  draw();
}

function draw() {
  const body = $("rows");
  body.replaceChildren();
  const start = page * PAGE;
  for (const i of shown.slice(start, start + PAGE)) {
    const s = samples[i];
    const tr = el("tr", {"data-index": String(i)},
      el("td", {text: jobs[s.j].name, title: jobs[s.j].name}),
      el("td", {text: s.i, title: s.i}),
      el("td", {}, el("span", {class: "st st-" + s.s, text: s.s + (s.d ? "*" : "")})),
      el("td", {text: score(s.c)}),
      el("td", {text: brief(s.a)}),
      el("td", {text: brief(s.g)}));
    if (i === openIndex) tr.classList.add("open");
    tr.addEventListener("click", () => openSample(i));
    body.append(tr);
  }
  const pages = Math.max(1, Math.ceil(shown.length / PAGE));
  $("count").textContent = `${shown.length} of ${samples.length} samples`;
  $("pageinfo").textContent = `page ${page + 1} of ${pages}`;
  $("prev").disabled = page === 0;
  $("next").disabled = page + 1 >= pages;
  $("none").hidden = shown.length > 0;
}

function block(text) {
  const t = show(text);
  if (t === "") return el("p", {class: "empty", text: "(none)"});
  const pre = el("pre", {text: t});
  if (t.length <= FOLD && t.split("\n").length <= 12) return pre;
  pre.classList.add("folded");
  const more = `show all (${t.length} characters)`;
  const button = el("button", {class: "fold", type: "button", text: more});
  button.addEventListener("click", () => {
    const folded = pre.classList.toggle("folded");
    button.textContent = folded ? more : "fold";
  });
  return el("div", {}, pre, button);
}

function openSample(i) {
  openIndex = i;
  const s = samples[i], j = jobs[s.j];
  const d = $("detail-body");
  d.replaceChildren();
  d.append(el("h2", {text: `${s.i}`}));
  const dl = el("dl");
  const add = (k, v) => {
    if (v === null || v === undefined || v === "") return;
    dl.append(el("dt", {text: k}), el("dd", {text: String(v)}));
  };
  add("job", j.name); add("task", j.task); add("view", j.view); add("model", j.model);
  add("status", s.s); add("score", score(s.c)); add("degraded", s.d);
  d.append(dl);
  d.append(el("h3", {text: "Messages"}));
  if (s.m && s.m.length) {
    for (const m of s.m) d.append(el("div", {class: "msg-role", text: m.role}), block(m.content));
  } else {
    d.append(el("p", {class: "empty", text: "(not recorded in samples.jsonl)"}));
  }
  d.append(el("h3", {text: "Raw output"}), block(s.r));
  d.append(el("h3", {text: "Parsed answer"}), block(s.a));
  d.append(el("h3", {text: "Gold"}), block(s.g));
  if (s.x) d.append(el("h3", {text: "Everything else the row holds"}), block(s.x));
  $("detail").hidden = false;
  for (const tr of document.querySelectorAll("#rows tr")) {
    tr.classList.toggle("open", tr.dataset.index === String(i));
  }
  address("#sample=" + encodeURIComponent(j.name + "/" + s.i));
}

function address(hash) {
  try { history.replaceState(null, "", hash || location.pathname + location.search); }
  catch (e) { /* a browser that refuses it for file:// pages: the address stays as it is */ }
}

function closeDetail() {
  $("detail").hidden = true;
  openIndex = -1;
  for (const tr of document.querySelectorAll("#rows tr.open")) tr.classList.remove("open");
  address("");
}

function fromHash() {
  const m = /^#sample=(.*)$/.exec(location.hash);
  if (!m) return;
  const key = decodeURIComponent(m[1]);
  const i = samples.findIndex((s) => jobs[s.j].name + "/" + s.i === key);
  if (i >= 0) {
    const at = shown.indexOf(i);
    if (at >= 0) { page = Math.floor(at / PAGE); draw(); }
    openSample(i);
  }
}

setup();
"""

PAGE = (
    "<!DOCTYPE html>\n<html lang=en><head><meta charset=utf-8>"
    '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
    "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">"
    '<meta name=viewport content="width=device-width, initial-scale=1">'
    f"<title>__TITLE__</title><style>{CSS}</style></head>\n<body>\n"
    "<header><h1>__TITLE__</h1><p class=small>__BACK__Click a row to open the sample; "
    "filter by job, status and score, or search ids, outputs, answers, gold and messages. "
    "Statuses: ok (scored as given), missing, invalid, out_of_range, error; * = degraded "
    "(read only by a fallback).</p><pre id=jobnotes class=small hidden></pre></header>\n"
    '<div class="controls"><input type=search id=q placeholder="search…" '
    'aria-label="search the samples"><select id=job aria-label="job"></select>'
    '<span id=statuses aria-label="statuses"></span>'
    '<select id=score aria-label="score"><option value="">any score</option>'
    '<option value="zero">score 0</option><option value="positive">score &gt; 0</option>'
    '<option value="none">no per-sample score</option></select>'
    "<span id=count class=small></span></div>\n"
    "<main><section id=list><table><colgroup><col class=c-job><col class=c-id>"
    "<col class=c-status><col class=c-score><col class=c-answer><col class=c-gold></colgroup>"
    "<thead><tr><th>job</th><th>id</th><th>status</th><th>score</th><th>answer</th>"
    "<th>gold</th></tr></thead><tbody id=rows></tbody></table>"
    "<p id=none class=empty hidden>No sample matches.</p>"
    '<div class="pager"><button id=prev type=button>previous</button><span id=pageinfo>'
    "</span><button id=next type=button>next</button></div></section>\n"
    "<aside id=detail hidden><button id=close type=button>close (Esc)</button>"
    "<div id=detail-body></div></aside></main>\n"
    '<script id="benchreg-data" type="application/json">__DATA__</script>\n'
    f"<script>{SCRIPT}</script>\n</body></html>\n"
)
