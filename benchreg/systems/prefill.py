"""Option scoring over a chat endpoint: an assistant prefill the server continues.

`model.scoring=logprobs` with `model.endpoint=chat` (``model=openai``) sends the sample's messages
plus a final assistant message holding the reply up to where the choice is written (the choices'
prefix, e.g. ``{"selected_candidate_index":``), with ``continue_final_message: true,
add_generation_prompt: false`` (vLLM, SGLang), ``max_tokens: 1`` and ``logprobs: true,
top_logprobs: N``; the answer's ``logprobs.content[0].top_logprobs`` is the model's next-token
distribution there, on the model's own chat template. :mod:`benchreg.systems.choices` walks it as
it walks a completions prompt.

A server may take the request and still not continue the message: llama-cpp-python's server (and
any server that ignores unknown fields) closes it and opens a new reply; a chat template that
trims message content (Llama 3's ``| trim``) drops the trailing white space of a prefill, so a
walk past a space would read the same position again. The endpoint check sends one probe
(:data:`PROBE_PREFILL`) and reads which of the three happened (:func:`prefill_verdict`); during the
run, a prefill that ends in white space and did not add a prompt token is the same error.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from loguru import logger

from benchreg.core.errors import BenchregError
from benchreg.systems.choices import invalid_logprobs
from benchreg.systems.completion import Completion, Failure

if TYPE_CHECKING:
    from benchreg.systems.chat_client import ChatClient

# the request fields that ask a server to continue the final assistant message
PREFILL_FIELDS = ("continue_final_message", "add_generation_prompt")
CONTINUE = {"continue_final_message": True, "add_generation_prompt": False}

# The probe: a reply that counts, cut after "24, ", to a user who asked for something else. A
# server that continues the assistant message writes "25" next; one whose chat template trims the
# message's trailing white space writes the space again (" 25", " "); one that ignores the prefill
# closes the message and starts a new reply ("OK", "I", ...). SmolLM2-135M-Instruct puts 0.996 on
# "2" when continued (its template rendered and completed), 0.993 on " " when the space is trimmed
# and 0.03 on "2" when the prefill is ignored (llama-cpp-python's chat endpoint), so half the
# probability decides.
PROBE_USER = "Reply with the word OK."
PROBE_PREFILL = ", ".join(str(i) for i in range(1, 25)) + ", "
PROBE_NEXT = "25"
PROBE_DECIDES = 0.5
_DIGITS = re.compile(r"\d+")

FIX = (
    "use a server that continues an assistant message (vLLM, SGLang), model.endpoint=completions "
    "for a base model (plain-text prompts), model=llama_cpp for a local GGUF (it renders the chat "
    "template itself), or model.scoring=text"
)


def probe_body(model: str, generation: Mapping[str, Any], top_logprobs: int) -> dict[str, Any]:
    """The endpoint check's one request: the probe conversation, continued for one token."""
    return {
        "model": model,
        **generation,
        "messages": [
            {"role": "user", "content": PROBE_USER},
            {"role": "assistant", "content": PROBE_PREFILL},
        ],
        **CONTINUE,
        "max_tokens": 1,
        "temperature": 0.0,
        "logprobs": True,
        "top_logprobs": top_logprobs,
    }


def prefill_verdict(alternatives: Mapping[str, float]) -> str:
    """What the probe's next-token log-probabilities say the server did with the prefill:
    ``continues``, ``trims`` (dropped its trailing white space) or ``ignores``."""
    continued = trimmed = 0.0
    for token, logprob in alternatives.items():
        body = token.lstrip()
        number = _DIGITS.match(body)
        writes_next = not body or (number is not None and PROBE_NEXT.startswith(number.group()))
        if not token or not writes_next:
            continue
        if body == token:
            continued += math.exp(logprob)
        else:
            trimmed += math.exp(logprob)
    if continued >= PROBE_DECIDES:
        return "continues"
    return "trims" if trimmed >= PROBE_DECIDES else "ignores"


def verdict_error(
    endpoint: str, verdict: str, alternatives: Mapping[str, float], hint: str | None = None
) -> BenchregError:
    """The one line for a server that does not continue the prefill as option scoring needs."""
    likeliest = sorted(alternatives.items(), key=lambda kv: -kv[1])[:3]
    shown = ", ".join(f"{token!r} {math.exp(lp):.2f}" for token, lp in likeliest)
    if verdict == "trims":
        what = (
            "drops the trailing white space of an assistant prefill (its chat template trims "
            "message content), so option probabilities cannot be read past a space"
        )
    else:
        what = (
            "does not continue an assistant prefill (it ignores continue_final_message and starts "
            "a new reply)"
        )
    return no_prefill(
        endpoint, f"{what}: after {PROBE_PREFILL[-8:]!r} it would write {shown}", hint
    )


def no_prefill(endpoint: str, detail: str, hint: str | None = None) -> BenchregError:
    return BenchregError(
        f"model.scoring=logprobs over chat needs the server to continue an assistant message, and "
        f"the server at {endpoint} {detail[:300]}",
        fix=f"{FIX} ({hint})" if hint else FIX,
    )


def no_chat_logprobs(endpoint: str, detail: str) -> BenchregError:
    return BenchregError(
        f"the server at {endpoint} gives no chat log-probabilities, which model.scoring=logprobs "
        f"over chat needs ({detail[:200]})",
        fix="use a server whose chat endpoint returns logprobs.content[].top_logprobs (vLLM, "
        "SGLang), set model.endpoint=completions for a base model, or set model.scoring=text",
    )


class PrefillAsker:
    """``await asker(text)``: the model's next-token log-probabilities after the reply so far
    ``text`` (the choices' prefix, then the branches the walk follows), one chat request each."""

    def __init__(
        self,
        client: ChatClient,
        messages: Sequence[Mapping[str, str]],
        extra: Mapping[str, Any],
        top_logprobs: int,
        endpoint: str,
    ) -> None:
        self._client = client
        self._messages = list(messages)
        self._body = {
            **extra,
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": top_logprobs,
        }
        self._endpoint = endpoint
        self._prompt_tokens: dict[str, int] = {}  # reply so far -> the server's prompt tokens

    async def __call__(self, text: str) -> Completion | Failure:
        if text:
            messages = [*self._messages, {"role": "assistant", "content": text}]
            body = {**self._body, **CONTINUE}
        else:  # nothing written yet (a choice without a prefix): the reply's first token
            messages, body = self._messages, self._body
        answer = await self._client.complete(messages, body)
        if isinstance(answer, Completion):
            self._check_kept(text, answer)
        return answer

    def _check_kept(self, text: str, answer: Completion) -> None:
        """A branch that adds white space must add a prompt token; one that does not was read at
        its parent's position (the template trimmed it): the walk would count it twice."""
        tokens = answer.usage.get("prompt_tokens")
        if tokens is None:
            return
        self._prompt_tokens[text] = tokens
        stem = text.rstrip()
        before = self._prompt_tokens.get(stem) if stem != text else None
        if before is not None and tokens <= before:
            raise no_prefill(
                self._endpoint,
                "drops the trailing white space of an assistant prefill (its chat template trims "
                f"message content): {text[-12:]!r} and {stem[-12:]!r} gave the same prompt "
                f"({tokens} tokens)",
            )


def closed_body(body: Mapping[str, Any]) -> dict[str, Any]:
    """The probe with the assistant message closed and a new reply opened: the prompt a server
    that ignores ``continue_final_message`` renders for the probe itself."""
    return {**body, "continue_final_message": False, "add_generation_prompt": True}


def prompt_tokens(data: Any) -> int | None:
    try:
        tokens = data["usage"]["prompt_tokens"]
    except (TypeError, KeyError):
        return None
    return tokens if isinstance(tokens, int) and tokens > 0 else None


def check_probe(
    endpoint: str, status: int, data: Any, message: str, hint: str, closed: Any = None
) -> str:
    """Read the endpoint check's probe answer (HTTP ``status``, JSON ``data``, the server's
    ``message``; ``closed``: the answer to :func:`closed_body`, when asked): the verdict, or one
    BenchregError naming the fix.

    What the server rendered decides where it says so: a continued prefill is a shorter prompt
    than the same message closed with a new reply opened, so equal ``prompt_tokens`` mean the
    fields were ignored (an error). Without token counts the next-token guess
    (:func:`prefill_verdict`) is only a warning: a model's guess is not proof."""
    if status != 200:
        lowered = message.lower()
        if "logprob" in lowered and not any(f in lowered for f in PREFILL_FIELDS):
            raise no_chat_logprobs(
                endpoint, f"POST /chat/completions gave HTTP {status}: {message}"
            )
        raise no_prefill(endpoint, f"refuses it: HTTP {status}: {message}", hint)
    alternatives = chat_top_logprobs(data)
    if not alternatives:
        raise no_chat_logprobs(
            endpoint, f"its answer has no choices[0].logprobs.content[0].top_logprobs ({hint})"
        )
    if (invalid := invalid_logprobs(endpoint, alternatives)) is not None:
        raise invalid  # NaN or positive values would make the verdict below meaningless
    continued, reopened = prompt_tokens(data), prompt_tokens(closed)
    if continued is not None and reopened is not None and continued >= reopened:
        raise no_prefill(
            endpoint,
            "does not continue an assistant prefill (it ignores continue_final_message: the probe "
            f"continued and closed gave the same prompt, {continued} and {reopened} tokens)",
            hint,
        )
    verdict = prefill_verdict(alternatives)
    if verdict != "continues":
        error = verdict_error(endpoint, verdict, alternatives, hint)
        logger.warning(f"{error.what}; scoring goes on (check option_mass): {error.fix}")
    return verdict


def chat_top_logprobs(data: Any) -> dict[str, float]:
    """The first generated token's alternatives of a chat answer (``choices[0].logprobs
    .content[0].top_logprobs``, the token itself included); {} when there are none."""
    try:
        first = data["choices"][0]["logprobs"]["content"][0]
        listed = first.get("top_logprobs") or []
    except (TypeError, KeyError, IndexError, AttributeError):
        return {}
    out = {
        str(alt["token"]): float(alt["logprob"])
        for alt in listed
        if isinstance(alt, dict) and "token" in alt and isinstance(alt.get("logprob"), int | float)
    }
    if (
        out
        and isinstance(first.get("token"), str)
        and isinstance(first.get("logprob"), int | float)
    ):
        out.setdefault(first["token"], float(first["logprob"]))
    return out
