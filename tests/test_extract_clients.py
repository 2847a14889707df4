"""The clients' one interface and their one-line failures (measure.extract.clients)."""

import pytest

from measure.extract.clients import (
    CallFailed,
    ClientUnavailable,
    CommandClient,
    make_client,
)


def test_command_client_reads_stdin_and_returns_stdout():
    reply = CommandClient("tr a-z A-Z").complete("hello", temperature=None, max_tokens=10)
    assert reply.text == "HELLO" and reply.input_tokens is None


def test_command_client_passes_parameters_in_the_environment():
    reply = CommandClient('printf "%s/%s/%s" "$MEASURE_MODEL" "$MEASURE_TEMPERATURE" "$MEASURE_MAX_TOKENS"', model="m").complete(
        "", temperature=0.5, max_tokens=7
    )
    assert reply.text == "m/0.5/7"


def test_command_failures():
    with pytest.raises(CallFailed, match="exited 3: boom"):
        CommandClient("echo boom >&2; exit 3").complete("x", temperature=None, max_tokens=1)
    with pytest.raises(CallFailed, match="timed out"):
        CommandClient("sleep 5", timeout=0.2).complete("x", temperature=None, max_tokens=1)
    with pytest.raises(ClientUnavailable, match="command not found"):
        CommandClient("no-such-command-measure-test").complete("x", temperature=None, max_tokens=1)


def test_make_client_reasons(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ClientUnavailable, match="ANTHROPIC_API_KEY is not set"):
        make_client("anthropic", None)
    with pytest.raises(ClientUnavailable, match="OPENAI_API_KEY is not set"):
        make_client("openai", None)
    with pytest.raises(ClientUnavailable, match="needs --command"):
        make_client("command", None)
    with pytest.raises(ClientUnavailable, match="unknown client"):
        make_client("gemini", None)
    assert make_client("openai", "local", base_url="http://127.0.0.1:9/v1").model == "local"
