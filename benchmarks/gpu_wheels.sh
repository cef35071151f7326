#!/usr/bin/env bash
# The wheels benchmarks/gpu_check.py needs on a GPU machine without network that has Python 3.12 with torch,
# transformers, accelerate, peft and pytest, at the versions of this checkout's .venv: Playpen's own dependencies
# (clemcore, TRL, datasets and what clemcore imports), and transformers at the .venv's version (the decoding loop
# is built on its Qwen3.5 cache classes). Run it where there is network; it downloads them into .whl/, which git
# ignores. Copy the checkout with .whl/ to the GPU machine and install them there with
#   python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD
# (docs/benchmarks.md, "GPU check"). The names are what a CPU run of gpu_check imports, less those packages, and
# wordfreq with its own needs: taboo's fresh instances (the trainers' fresh_instances) are drawn with its word lists.
set -euo pipefail
cd "$(dirname "$0")/.."
PIP=${PIP:-.venv/bin/pip}  # the venv whose versions are carried
NAMES="transformers peft trl datasets clemcore dill multiprocess nltk pettingzoo gymnasium farama-notifications
openenv-core fastapi starlette uvicorn pydantic pydantic-core pydantic-settings annotated-types typing-inspection
fastmcp-slim mcp mcp-types py-key-value-aio sse-starlette python-multipart python-dotenv pyjwt cryptography cffi
email-validator httpx2 orjson websockets watchfiles trio outcome sniffio exceptiongroup opentelemetry-api
opentelemetry-semantic-conventions google-genai google-auth cachetools beartype brotli chardet defusedxml
platformdirs pysocks pytz py wordfreq ftfy langcodes locate wcwidth"
mkdir -p .whl
FREEZE=$("$PIP" freeze 2>/dev/null)
for name in $NAMES; do
  pin=$(echo "$FREEZE" | grep -i -E "^${name//-/[-_]}==" | head -1)
  [ -n "$pin" ] || { echo "not in $PIP freeze: $name" >&2; exit 1; }
  "$PIP" download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
    --platform manylinux2014_x86_64 --platform manylinux1_x86_64 --platform manylinux_2_24_x86_64 \
    --platform manylinux_2_31_x86_64 --platform manylinux_2_34_x86_64 -d .whl "$pin"
done
du -sh .whl
