"""The contract is the API: schemathesis generates requests from openapi.yaml (valid and invalid, one by one
and as sequences that create and then use resources, following the contract's links) against a live
`quad serve`, once as a member and once as the admin, and checks every answer against the contract: its
status is documented, its body matches the schema, no 5xx, valid data accepted, invalid data refused,
`Allow` right on 405. It must finish with no failure.

The settings (e2e/schemathesis/schemathesis.toml) list only the answers no schema can predict (an image's
bytes, a stale If-Match, rules over stored state); the hook gives each generated Idempotency-Key one intent.
"""
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import session_token

HERE = Path(__file__).parent / "schemathesis"


def schemathesis_command() -> str:
    found = shutil.which("schemathesis") or str(Path(sys.executable).parent / "schemathesis")
    if not Path(found).exists():
        pytest.fail("schemathesis is missing: pip install -r e2e/requirements.txt", pytrace=False)
    return found


def run_schemathesis(server, workdir: Path, token: str, *exclusions: str) -> str:
    args = [
        schemathesis_command(), "--config-file", str(HERE / "schemathesis.toml"), "run", f"{server.url}/api/openapi.yaml", "--url", server.url, "--checks", "all",
        "-H", f"Authorization: Bearer {token}", "--exclude-path", "/api/events",
        "--max-examples", "30", "--seed", "1", "--workers", "1", "--no-color",
    ]
    for operation in exclusions:
        args += ["--exclude-operation-id", operation]
    env = {**os.environ, "PYTHONPATH": str(HERE)}
    # Its caches go to the test's own folder, not the checkout.
    result = subprocess.run(args, cwd=workdir, env=env, capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    summary = [line for line in output.splitlines() if re.search(r"generated|failures?|passed|Tested|Selected", line)]
    print("\n".join(summary))
    assert result.returncode == 0, output[-6000:]
    return output


def test_the_server_keeps_its_contract_for_a_member_and_the_admin(quad_server_factory, tmp_path):
    """Every operation, as ada (a member) and then as the admin, with generated data: no failure of any check."""
    # Rate limits would turn thousands of generated requests into 429s: they are tested on their own.
    server = quad_server_factory(demo=True, env={"QUAD_RATE_LIMIT": "0"})
    member = session_token(server, "ada")
    # The member run keeps ada signed in; the admin run may remove people, so it comes second.
    run_schemathesis(server, tmp_path, member, "endSession")
    run_schemathesis(server, tmp_path, server.admin_token)
