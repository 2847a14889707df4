"""`make lab`: JupyterLab starts with the notebooks as notebooks (jupytext) and the project's kernel.

Started headless on a free loopback port with a random token, asked for the notebook tree, then
stopped (its whole process group, which this test started). Bounded: 120 s to come up.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("jupyterlab", reason="make lab's extra (pip install -e '.[lab]'; make test installs it)")

REPO = Path(__file__).parent.parent
START_TIMEOUT = 120


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str):
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 - loopback only
        return response.status, response.read()


@pytest.mark.slow
def test_make_lab_serves_the_notebooks(tmp_path):
    port, token = _free_port(), secrets.token_hex(16)
    # IPC socket paths must fit in 107 bytes: pytest's tmp_path can be longer than that.
    runtime = Path(tempfile.mkdtemp(prefix="lab-", dir="/tmp"))
    env = {
        **os.environ,
        # Nothing of this test outside tmp_path (runtime: a short folder of its own, removed at the end).
        "JUPYTER_RUNTIME_DIR": str(runtime),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"),
    }
    args = f"--no-browser --ip=127.0.0.1 --port={port} --port-retries=0 --IdentityProvider.token={token}"
    log = (tmp_path / "lab.log").open("wb")
    proc = subprocess.Popen(
        ["make", "-s", "lab", f"LAB_ARGS={args}"],
        cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT
        while True:
            try:
                status, body = _get(f"{base}/api/contents/notebooks?token={token}")
                break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"jupyter lab did not come up:\n{(tmp_path / 'lab.log').read_text(errors='replace')[-3000:]}")
                time.sleep(0.5)
        assert status == 200
        listing = {c["name"]: c["type"] for c in json.loads(body)["content"]}
        sources = sorted(p.name for p in (REPO / "notebooks").glob("[0-9]*.py"))
        assert sources and all(listing.get(name) == "notebook" for name in sources), listing

        status, body = _get(f"{base}/api/contents/notebooks/{sources[0]}?type=notebook&token={token}")
        nb = json.loads(body)["content"]
        assert nb["metadata"]["kernelspec"]["name"] == "python3"
        assert any("parameters" in c["metadata"].get("tags", []) for c in nb["cells"])

        status, body = _get(f"{base}/api/kernelspecs?token={token}")
        assert "python3" in json.loads(body)["kernelspecs"]
        status, body = _get(f"{base}/lab/api/settings/@jupyterlab/docmanager-extension:plugin?token={token}")
        assert b"Jupytext Notebook" in body  # double-clicking a .py opens it as a notebook
        status, _ = _get(f"{base}/lab/tree/notebooks/{sources[0]}?token={token}")
        assert status == 200

        # A kernel of the project's venv, over IPC sockets: no "running over TCP without encryption".
        request = urllib.request.Request(
            f"{base}/api/kernels", data=b'{"name": "python3"}', method="POST",
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        )
        for attempt in range(3):  # a kernel start can time out on a loaded machine: retry, bounded
            try:
                with urllib.request.urlopen(request, timeout=30) as response:  # noqa: S310 - loopback only
                    kernel = json.loads(response.read())
                break
            except urllib.error.HTTPError as exc:
                if attempt == 2:
                    pytest.fail(f"kernel start failed ({exc}):\n{(tmp_path / 'lab.log').read_text(errors='replace')[-3000:]}")
                time.sleep(2)
        connection = json.loads((runtime / f"kernel-{kernel['id']}.json").read_text())
        assert connection["transport"] == "ipc"
        from jupyter_client import BlockingKernelClient

        client = BlockingKernelClient(connection_file=str(runtime / f"kernel-{kernel['id']}.json"))
        client.load_connection_file()
        client.start_channels()
        try:
            client.wait_for_ready(timeout=60)  # by now the kernel has printed whatever it prints at start
            outputs = []
            client.execute_interactive("import sys; print(sys.prefix)", timeout=30,
                                       output_hook=lambda m: outputs.append(m["content"].get("text", "")))
        finally:
            client.stop_channels()
        assert Path("".join(outputs).strip()).resolve() == (REPO / ".venv").resolve()  # the project's kernel
        request = urllib.request.Request(f"{base}/api/kernels/{kernel['id']}", method="DELETE",
                                         headers={"Authorization": f"token {token}"})
        urllib.request.urlopen(request, timeout=30).close()  # noqa: S310 - loopback only
        assert "without encryption" not in (tmp_path / "lab.log").read_text(errors="replace")
    finally:
        shutil.rmtree(runtime, ignore_errors=True)
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        log.close()
