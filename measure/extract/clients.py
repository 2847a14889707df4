"""The model clients behind one interface: Anthropic's and OpenAI's SDKs, or a shell command."""

from __future__ import annotations

import importlib
import os
import subprocess
from dataclasses import dataclass

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


_SDKS = {"anthropic": ("Anthropic", "the Anthropic API", ("input_tokens", "output_tokens")),
         "openai": ("OpenAI", "the server", ("prompt_tokens", "completion_tokens"))}
"""Client -> its SDK's client class, how a failure names the server, and the usage fields (input, output)."""


class SDKClient:
    """An official SDK: `anthropic` (Messages API) or `openai` (chat completions, any compatible server
    via base_url). Retries: the SDK's."""

    def __init__(self, name: str, model: str, base_url: str | None, max_retries: int, timeout: float):
        key = os.environ.get(f"{name.upper()}_API_KEY")
        if not key and name == "anthropic":
            raise ClientUnavailable("ANTHROPIC_API_KEY is not set (the anthropic client needs an API key)")
        if not key and not base_url:  # a local server (llama.cpp, vLLM, Ollama) needs no key: a placeholder is sent
            raise ClientUnavailable("OPENAI_API_KEY is not set (give --base-url for a local server that needs none)")
        self.name, self.model = name, model
        try:
            self._sdk = importlib.import_module(name)
        except ImportError:
            raise ClientUnavailable(f"the {name} SDK is not installed: pip install -e '.[extract]'") from None
        sdk_client, self._server, self._usage = _SDKS[name]
        self._client = getattr(self._sdk, sdk_client)(api_key=key or "not-needed", base_url=base_url,
                                                      max_retries=max_retries, timeout=timeout)

    def complete(self, prompt: str, *, temperature: float | None, max_tokens: int) -> Reply:
        """The reply; no connection or a refused key stops the run (ClientUnavailable), other errors fail one call."""
        create = self._client.messages.create if self.name == "anthropic" else self._client.chat.completions.create
        try:
            resp = create(
                model=self.model, max_tokens=max_tokens, messages=[{"role": "user", "content": prompt}],
                # Anthropic's create() has no temperature argument: sent in the body only when asked for.
                extra_body=None if temperature is None else {"temperature": temperature},
            )
        except self._sdk.APIConnectionError as exc:  # includes timeouts, after the SDK's retries
            raise ClientUnavailable(f"cannot reach {self._server}: {exc}") from None
        except self._sdk.AuthenticationError as exc:
            raise ClientUnavailable(f"{self._server} refused the key: {_status(exc)}") from None
        except self._sdk.APIError as exc:
            raise CallFailed(f"{self.name}: {_status(exc)}") from None
        if self.name == "anthropic":
            text = "".join(getattr(b, "text", "") for b in resp.content if getattr(b, "type", None) == "text")
        elif resp.choices:
            text = resp.choices[0].message.content or ""
        else:
            raise CallFailed("openai: reply has no choices")
        usage = getattr(resp, "usage", None)
        return Reply(text, *(getattr(usage, field, None) for field in self._usage))


class CommandClient:
    """A shell command that reads the prompt on stdin and prints the reply on stdout."""

    name = "command"

    def __init__(self, command: str, model: str = "command", timeout: float = 600.0):
        if not command:
            raise ClientUnavailable("--client command needs --command 'CMD' (reads the prompt on stdin, prints the reply)")
        self.command, self.model, self.timeout = command, model, timeout

    def complete(self, prompt: str, *, temperature: float | None, max_tokens: int) -> Reply:
        env = dict(os.environ, MEASURE_TEMPERATURE="" if temperature is None else str(temperature),
                   MEASURE_MAX_TOKENS=str(max_tokens), MEASURE_MODEL=self.model)
        try:
            done = subprocess.run(self.command, shell=True, input=prompt.encode(), capture_output=True,
                                  timeout=self.timeout, env=env)
        except subprocess.TimeoutExpired:
            raise CallFailed(f"command timed out after {self.timeout:g} s") from None
        if done.returncode == 127:
            raise ClientUnavailable(f"command not found: {self.command}")
        if done.returncode != 0:
            tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [""]
            raise CallFailed(f"command exited {done.returncode}: {tail[0][:200]}")
        return Reply(done.stdout.decode(errors="replace"))


def _status(exc) -> str:
    code = getattr(exc, "status_code", None)
    message = getattr(exc, "message", None) or str(exc)
    return f"HTTP {code}: {message}"[:300] if code else message[:300]


Client = SDKClient | CommandClient
"""A client: its `complete(prompt, *, temperature, max_tokens)` returns a Reply."""


def make_client(name: str, model: str | None, base_url: str | None = None, command: str | None = None,
                max_retries: int = 2, timeout: float = 600.0) -> Client:
    """The client named `name` (see CLIENTS). Raises ClientUnavailable with a one-line reason."""
    model = model or DEFAULT_MODELS.get(name, name)
    if name in _SDKS:
        return SDKClient(name, model, base_url, max_retries, timeout)
    if name == "command":
        return CommandClient(command or "", model, timeout)
    raise ClientUnavailable(f"unknown client {name!r}; choose from {', '.join(CLIENTS)}")
