#!/usr/bin/env bash
# The main job, on the built-in example release, offline and without a token:
# build the drafter (safetensors + GGUF) and its evaluation JSON from raw inputs, pin the target,
# render the card, verify, sign (OpenSSF Model Signing, a throwaway EC key), publish as one commit
# to the embedded local Hub, and verify the Hub and the signature.
# Works on a copy of manifests/example*/ in a temporary folder; prints each command it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/_venv.sh "[sign]"

work=$(mktemp -d "${TMPDIR:-/tmp}/hubrelease-demo.XXXXXX")
cp -R manifests/example "$work/example"
cp -R manifests/example-target "$work/example-target"
cd "$work/example"
run() { printf '\n$ %s\n' "$*"; "$@"; }

# Built files are rebuilt from their inputs; the builders are byte-deterministic, so the
# digests the manifest already pins must come out identical.
rm -f model.safetensors config.json tiny-dflash2-q8_0.gguf evaluation.json README.md
run hubrelease build safetensors-drafter checkpoint --out . --manifest hubrelease.yaml
run hubrelease build gguf-drafter . --flavor mainline --outtype q8_0 --tokenizer-from ../example-target/tiny-qwen3-f16.gguf \
  --out tiny-dflash2-q8_0.gguf --manifest hubrelease.yaml
run hubrelease build eval autoregressive=bench/autoregressive.jsonl dflash2=bench/dflash2.jsonl \
  --spec bench/eval-spec.yaml --prompts bench/prompts.jsonl --out evaluation.json --manifest hubrelease.yaml
run hubrelease lint tiny-dflash2-q8_0.gguf --config config.json
# Every recorded recipe re-run in a temporary folder: inputs by digest, bytes and figures compared.
run hubrelease rebuild hubrelease.yaml --check --inputs ../example-target

# The target must exist before the drafter can pin it: publish it. Its pin says `unpinned: true`,
# which lock keeps as it is (and says so); --pin converts it on purpose to the commit just pushed.
run hubrelease push ../example-target/hubrelease.yaml --endpoint local
run hubrelease lock hubrelease.yaml --endpoint local
run hubrelease lock hubrelease.yaml --endpoint local --pin hubrelease-example/tiny-target
run hubrelease render-card hubrelease.yaml
run hubrelease verify hubrelease.yaml
# A demo P-256 key pair, kept next to the local Hub so a re-run signs with the same key (and an
# unchanged release pushes nothing). A real key stays out of the release folder.
keys=${HUBRELEASE_LOCAL_HUB:-$HOME/.cache/hubrelease/local-hub}-signing
if [ ! -f "$keys/signing-key.pem" ]; then
  mkdir -p "$keys"
  python -c 'import sys; from cryptography.hazmat.primitives import serialization as s; from cryptography.hazmat.primitives.asymmetric import ec
k = ec.generate_private_key(ec.SECP256R1())
open(sys.argv[1] + "/signing-key.pem", "wb").write(k.private_bytes(s.Encoding.PEM, s.PrivateFormat.PKCS8, s.NoEncryption()))
open(sys.argv[1] + "/signing-pub.pem", "wb").write(k.public_key().public_bytes(s.Encoding.PEM, s.PublicFormat.SubjectPublicKeyInfo))' "$keys"
fi
run hubrelease sign hubrelease.yaml --key "$keys/signing-key.pem"
run hubrelease push hubrelease.yaml --endpoint local --dry-run
run hubrelease push hubrelease.yaml --endpoint local
run hubrelease verify hubrelease.yaml --remote --endpoint local --signature --public-key "$keys/signing-pub.pem"
printf '\ndemo release left in %s\n' "$work/example"
