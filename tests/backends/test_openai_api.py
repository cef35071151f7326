"""The OpenAI-compatible backend against a local stub server: retries, concurrency, TLS, keys."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess

import pytest
from clemcore.backends import ModelSpec

from playpen.backends import load_model
from playpen.errors import PlaypenError
from playpen.testing import StubChatServer

MESSAGES = [{"role": "user", "content": "hello"}]


def stub_model(base_url: str, **config):
    spec = ModelSpec(model_name="stub", backend="openai_compatible", model_id="stub-model", base_url=base_url,
                     model_config={"max_retries": 3, "timeout": 10, **config})
    return load_model(spec, temperature=0.0, max_tokens=20)


def test_retries_rate_limits_then_answers(in_tmp_cwd):
    with StubChatServer(reply=lambda m: "pong", fail_first=2, fail_status=429) as server:
        generation = asyncio.run(stub_model(server.base_url).agenerate(MESSAGES))
    assert generation.text == "pong"
    assert server.requests == 3


def test_gives_up_after_its_retries(in_tmp_cwd):
    from openai import APIStatusError

    with StubChatServer(fail_first=100, fail_status=503) as server:
        model = stub_model(server.base_url, max_retries=1)
        with pytest.raises(APIStatusError):
            asyncio.run(model.agenerate(MESSAGES))
    assert server.requests == 2


def test_requests_are_concurrent(in_tmp_cwd):
    with StubChatServer(delay=0.2) as server:
        model = stub_model(server.base_url)

        async def many():
            return await asyncio.gather(*(model.agenerate(MESSAGES) for _ in range(16)))

        asyncio.run(many())
    assert server.max_in_flight >= 8


def test_key_comes_from_key_json(in_tmp_cwd):
    (in_tmp_cwd / "key.json").write_text(json.dumps({"openai_compatible": {"api_key": "sk-secret-test-123456"}}))
    with StubChatServer() as server:
        asyncio.run(stub_model(server.base_url).agenerate(MESSAGES))
    assert server.seen_auth == ["Bearer sk-secret-test-123456"]


def test_missing_server_address_is_a_clear_error(in_tmp_cwd, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(PlaypenError, match="base_url"):
        load_model(ModelSpec(model_name="x", backend="openai_compatible", model_config={}))


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_tls_certificates_are_verified(tmp_path, in_tmp_cwd):
    from openai import APIConnectionError

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True)
    with StubChatServer(certfile=str(cert), keyfile=str(key)) as server:
        with pytest.raises(APIConnectionError):  # a self-signed certificate must not be trusted
            asyncio.run(stub_model(server.base_url, max_retries=0).agenerate(MESSAGES))
    assert server.requests == 0


@pytest.mark.parametrize("fault", ["500", "429", "hang", "close"])
def test_transient_server_faults_are_retried_by_the_client(in_tmp_cwd, fault):
    with StubChatServer(reply=lambda m: "pong", fault=lambda n, m: fault if n == 1 else None, hang_seconds=2) as server:
        generation = asyncio.run(stub_model(server.base_url, max_retries=1, timeout=0.5).agenerate(MESSAGES))
        assert generation.text == "pong" and server.requests == 2 and server.faults[fault] == 1


@pytest.mark.parametrize("fault", ["bad_json", "empty_choices", "null_content", "huge", "bad_utf8"])
def test_a_reply_without_an_answer_of_the_model_is_a_model_call_error(in_tmp_cwd, fault):
    from playpen.backends import ModelCallError

    with StubChatServer(fault=lambda n, m: fault) as server:
        with pytest.raises(ModelCallError, match="stub: malformed reply|stub: the server's reply is no JSON"):
            asyncio.run(stub_model(server.base_url).agenerate(MESSAGES))
    assert server.requests == 1  # a 200 answer is not retried by the client: the engine retries the episode


def test_null_content_at_the_token_limit_is_the_models_empty_answer(in_tmp_cwd):
    model = stub_model("http://127.0.0.1:9/v1")
    raw = {"choices": [{"finish_reason": "length", "message": {"role": "assistant", "content": None}}]}
    assert model._reply_text(raw) == ""
