"""The model clients behind one interface: Anthropic's and OpenAI's SDKs, or a shell command."""

from __future__ import annotations

import importlib
import os
import subprocess
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Protocol

CLIENTS = ("anthropic", "openai", "command")

DEFAULT_MODELS = {"anthropic": "claude-sonnet-5", "openai": "gpt-4o-mini", "command": "command"}
"""Model when --model is not given (for `command`, the model name is only a label in the store)."""


@dataclass(frozen=True)
class Reply:
    """A model's answer to one prompt, with the usage the server reported (None when it did not)."""

    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None


class CallFailed(Exception):
    """This call failed (a status error, a bad reply); the run records an error row and goes on."""


class ClientUnavailable(Exception):
    """No call can succeed (missing key, server unreachable): the run stops with one line."""


class Client(Protocol):
    name: str
    model: str

    def complete(self, prompt: str, *, temperature: float | None, max_tokens: int) -> Reply: ...


class AnthropicClient:
    """The official `anthropic` SDK (Messages API); key from ANTHROPIC_API_KEY. Retries: the SDK's."""

    name = "anthropic"

    def __init__(self, model: str, base_url: str | None = None, max_retries: int = 2, timeout: float = 600.0):
        key = os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise ClientUnavailable("ANTHROPIC_API_KEY is not set (the anthropic client needs an API key)")
        self._sdk = _import_sdk("anthropic")
        self.model = model
        self._client = self._sdk.Anthropic(api_key=key, base_url=base_url, max_retries=max_retries, timeout=timeout)

    def complete(self, prompt: str, *, temperature: float | None, max_tokens: int) -> Reply:
        with _sdk_errors(self._sdk, self.name, "the Anthropic API"):
            msg = self._client.messages.create(
                model=self.model,
                max_tokens=max_tokens,
                messages=[{"role": "user", "content": prompt}],
                # This SDK's create() has no temperature argument: sent in the body only when asked for.
                extra_body=None if temperature is None else {"temperature": temperature},
            )
        text = "".join(getattr(b, "text", "") for b in msg.content if getattr(b, "type", None) == "text")
        usage = getattr(msg, "usage", None)
        return Reply(text, getattr(usage, "input_tokens", None), getattr(usage, "output_tokens", None))


class OpenAIClient:
    """The official `openai` SDK (chat completions) for any compatible server via base_url.

    A local server (llama.cpp, vLLM, Ollama) needs no key: OPENAI_API_KEY is used when set,
    else a placeholder is sent. Retries: the SDK's.
    """

    name = "openai"

    def __init__(self, model: str, base_url: str | None = None, max_retries: int = 2, timeout: float = 600.0):
        key = os.environ.get("OPENAI_API_KEY")
        if not key and not base_url:
            raise ClientUnavailable("OPENAI_API_KEY is not set (give --base-url for a local server that needs none)")
        self._sdk = _import_sdk("openai")
        self.model = model
        self._client = self._sdk.OpenAI(api_key=key or "not-needed", base_url=base_url, max_retries=max_retries, timeout=timeout)

    def complete(self, prompt: str, *, temperature: float | None, max_tokens: int) -> Reply:
        with _sdk_errors(self._sdk, self.name, "the server"):
            resp = self._client.chat.completions.create(
                model=self.model,
                max_tokens=max_tokens,
                messages=[{"role": "user", "content": prompt}],
                **({} if temperature is None else {"temperature": temperature}),
            )
        if not resp.choices:
            raise CallFailed("openai: reply has no choices")
        text = resp.choices[0].message.content or ""
        usage = getattr(resp, "usage", None)
        return Reply(text, getattr(usage, "prompt_tokens", None), getattr(usage, "completion_tokens", None))


class CommandClient:
    """A shell command that reads the prompt on stdin and prints the reply on stdout."""

    name = "command"

    def __init__(self, command: str, model: str = "command", timeout: float = 600.0):
        if not command:
            raise ClientUnavailable("--client command needs --command 'CMD' (reads the prompt on stdin, prints the reply)")
        self.command = command
        self.model = model
        self.timeout = timeout

    def complete(self, prompt: str, *, temperature: float | None, max_tokens: int) -> Reply:
        env = dict(os.environ, MEASURE_TEMPERATURE="" if temperature is None else str(temperature), MEASURE_MAX_TOKENS=str(max_tokens), MEASURE_MODEL=self.model)
        try:
            done = subprocess.run(
                self.command, shell=True, input=prompt.encode(), capture_output=True, timeout=self.timeout, env=env
            )
        except subprocess.TimeoutExpired:
            raise CallFailed(f"command timed out after {self.timeout:g} s") from None
        if done.returncode == 127:
            raise ClientUnavailable(f"command not found: {self.command}")
        if done.returncode != 0:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise CallFailed(f"command exited {done.returncode}: {tail[0][:200]}")
        return Reply(done.stdout.decode(errors="replace"))


def _import_sdk(name: str):
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ClientUnavailable(f"the {name} SDK is not installed: pip install -e '.[extract]'") from None


@contextmanager
def _sdk_errors(sdk, client: str, server: str):
    """An SDK's errors as this module's: no connection or a refused key stops the run, others fail one call."""
    try:
        yield
    except sdk.APIConnectionError as exc:  # includes timeouts, after the SDK's retries
        raise ClientUnavailable(f"cannot reach {server}: {exc}") from None
    except sdk.AuthenticationError as exc:
        raise ClientUnavailable(f"{server} refused the key: {_status(exc)}") from None
    except sdk.APIError as exc:
        raise CallFailed(f"{client}: {_status(exc)}") from None


def _status(exc) -> str:
    code = getattr(exc, "status_code", None)
    message = getattr(exc, "message", None) or str(exc)
    return f"HTTP {code}: {message}"[:300] if code else message[:300]


def make_client(name: str, model: str | None, base_url: str | None = None, command: str | None = None, max_retries: int = 2, timeout: float = 600.0) -> Client:
    """The client named `name` (see CLIENTS). Raises ClientUnavailable with a one-line reason."""
    model = model or DEFAULT_MODELS.get(name, name)
    if name == "anthropic":
        return AnthropicClient(model, base_url, max_retries, timeout)
    if name == "openai":
        return OpenAIClient(model, base_url, max_retries, timeout)
    if name == "command":
        return CommandClient(command or "", model, timeout)
    raise ClientUnavailable(f"unknown client {name!r}; choose from {', '.join(CLIENTS)}")

