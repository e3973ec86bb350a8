"""The client's settings, without a server: the environment, URL checks, path segments, nothing sent at import."""

from __future__ import annotations

import subprocess
import sys

import pytest

from maitento import AsyncMaitento, InvalidArgumentError, Maitento
from maitento._base import path, with_query


def test_reads_the_environment_when_not_given(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MT_API_URL", "http://127.0.0.1:8080/")
    monkeypatch.setenv("MT_API_KEY", "mt_from_env")
    with Maitento() as mt:
        assert mt.api_url == "http://127.0.0.1:8080"
        assert mt._headers["authorization"] == "Bearer mt_from_env"
    with Maitento("http://example.test", "mt_given") as given:
        assert given.api_url == "http://example.test" and given._headers["authorization"] == "Bearer mt_given"


def test_refuses_a_missing_or_non_http_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MT_API_URL", raising=False)
    with pytest.raises(ValueError, match="MT_API_URL"):
        Maitento()
    with pytest.raises(ValueError, match="http or https"):
        AsyncMaitento("ftp://127.0.0.1")


def test_path_parameters_are_one_segment_each() -> None:
    assert path("/v1/connectors/{}/versions/{}", "a/b?c", 2) == "/v1/connectors/a%2Fb%3Fc/versions/2"
    for bad in ("", ".", ".."):
        with pytest.raises(InvalidArgumentError) as caught:
            path("/v1/runs/{}", bad)
        assert caught.value.code == "api:sdk:invalid-argument"
    assert with_query("/v1/runs", {"limit": 5, "cursor": None, "interactive": True}) == "/v1/runs?limit=5&interactive=true"


def test_import_loads_no_pydantic_and_opens_no_socket() -> None:
    code = (
        "import socket, sys\n"
        "def refuse(*a, **k): raise AssertionError('network at import')\n"
        "socket.socket.connect = refuse\n"
        "socket.create_connection = refuse\n"
        "import maitento\n"
        "assert 'pydantic' not in sys.modules, 'pydantic loaded at import'\n"
        "from maitento import Run\n"
        "assert 'pydantic' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
