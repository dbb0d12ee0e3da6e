"""Provider selection as Claude Code does it (`model/cloud/platforms.py`), the model ids each platform
sends (`model/cloud/platform_ids.py`), the helpers' outputs (`model/cloud/credential_helpers.py`) and what a
cloud's errors mean (`model/cloud/platform_errors.py`). Pure logic: one mapping in, a `Platform` out."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acp_agent.config import BUILTIN_MODELS, Config
from acp_agent.errors import AuthRequired
from acp_agent.model.cloud.credential_helpers import (
    CachedOutput,
    api_key_ttl,
    aws_keys_from_export,
    helpers_from_settings,
)
from acp_agent.model.cloud.platform_errors import explain
from acp_agent.model.cloud.platform_ids import _BUILTIN_BY_FAMILY, anthropic_id, bedrock_prefix
from acp_agent.model.cloud.platforms import (
    ALWAYS_SECRET,
    AWS_SECRETS,
    GOOGLE_SECRETS,
    custom_headers,
    select_platform,
)
from acp_agent.model.profiles import builtin_prices


def test_no_selector_is_the_anthropic_api_and_a_base_url_is_a_gateway() -> None:
    assert select_platform({}).name == "anthropic"
    gateway = select_platform({"ANTHROPIC_BASE_URL": "https://llm.corp/", "CLAUDE_CODE_USE_BEDROCK": ""})
    assert gateway.name == "anthropic" and "gateway" in gateway.label
    assert "base URL https://llm.corp/ (from ANTHROPIC_BASE_URL)" in gateway.status()
    assert gateway.features.models_api and gateway.price_factor == 1


@pytest.mark.parametrize("value", ["1", "true", "TRUE", "yes", "on"])
def test_a_selector_takes_claude_codes_truthy_values(value: str) -> None:
    assert select_platform({"CLAUDE_CODE_USE_FOUNDRY": value}).name == "foundry"


@pytest.mark.parametrize("value", ["", "0", "false", "no"])
def test_an_empty_or_false_selector_is_unset(value: str) -> None:
    assert select_platform({"CLAUDE_CODE_USE_BEDROCK": value}).name == "anthropic"


def test_bedrock_wins_over_the_others_and_names_what_it_ignored() -> None:
    platform = select_platform(
        {"CLAUDE_CODE_USE_BEDROCK": "1", "CLAUDE_CODE_USE_VERTEX": "1", "CLAUDE_CODE_USE_ANTHROPIC_AWS": "1"}
    )
    assert platform.name == "bedrock"
    assert platform.ignored == ("CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_ANTHROPIC_AWS")
    assert "Also set, and ignored: CLAUDE_CODE_USE_VERTEX" in platform.status()


def test_the_bedrock_region_follows_claude_codes_order(tmp_path: Path) -> None:
    aws = tmp_path / ".aws"
    aws.mkdir()
    (aws / "config").write_text("[default]\nregion = eu-central-1\n[profile work]\nregion = ap-northeast-1\n")
    (aws / "credentials").write_text("[work]\naws_access_key_id = x\n")
    base = {"CLAUDE_CODE_USE_BEDROCK": "1", "HOME": str(tmp_path)}
    assert str(select_platform(base).region) == f"eu-central-1 (from profile default in {aws}/config)"
    work = select_platform({**base, "AWS_PROFILE": "work"})
    assert work.region is not None and work.region.value == "ap-northeast-1"
    assert work.models.wire("claude-sonnet-5-5") == "jp.anthropic.claude-sonnet-5-5"
    assert (
        str(select_platform({**base, "AWS_DEFAULT_REGION": "us-west-2"}).region)
        == "us-west-2 (from AWS_DEFAULT_REGION)"
    )
    both = select_platform({**base, "AWS_DEFAULT_REGION": "us-west-2", "AWS_REGION": "eu-west-3"})
    assert str(both.region) == "eu-west-3 (from AWS_REGION)"
    bad = select_platform({**base, "AWS_REGION": "us-east-1/evil", "HOME": str(tmp_path / "none")})
    assert str(bad.region) == "us-east-1 (from default)"


def test_bedrock_model_ids_are_inference_profiles_pins_and_arns_go_as_given() -> None:
    arn = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123"
    env = {
        "CLAUDE_CODE_USE_BEDROCK": "1",
        "AWS_REGION": "us-east-2",
        "ANTHROPIC_DEFAULT_SONNET_MODEL": arn,
        "ANTHROPIC_MODEL": arn,
    }
    ids = select_platform(env).models
    assert ids.wire("claude-opus-5-5") == "us.anthropic.claude-opus-5-5"
    assert ids.wire("claude-haiku-4-5") == "us.anthropic.claude-haiku-4-5-20251001-v1:0"
    assert ids.wire("claude-sonnet-5-5") == arn  # the family's pin
    assert ids.session_model(arn) == "claude-sonnet-5-5"  # shown, priced and profiled as the built-in
    assert ids.wire("eu.anthropic.claude-opus-5-5") == "eu.anthropic.claude-opus-5-5"
    assert ids.wire("claude-opus-5-5[1m]") == "us.anthropic.claude-opus-5-5"
    assert ids.choices() == list(dict.fromkeys(["claude-sonnet-5-5", *BUILTIN_MODELS]))
    override = select_platform({**env, "ANTHROPIC_BEDROCK_REGION_PREFIX": "global"}).models
    assert override.wire("claude-opus-5-5") == "global.anthropic.claude-opus-5-5"


def test_the_built_in_families_are_the_configs_built_in_models() -> None:
    assert sorted(_BUILTIN_BY_FAMILY.values()) == sorted(BUILTIN_MODELS)


@pytest.mark.parametrize(
    ("region", "prefix"),
    [
        ("us-gov-west-1", "us-gov"),
        ("ca-central-1", "us"),
        ("eu-west-1", "eu"),
        ("ap-south-1", "apac"),
        ("ap-southeast-2", "au"),
        ("sa-east-1", "global"),
    ],
)
def test_the_bedrock_prefix_comes_from_the_region(region: str, prefix: str) -> None:
    assert bedrock_prefix(region) == prefix


def test_vertex_ids_take_an_at_version_and_other_platforms_keep_theirs() -> None:
    env = {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "global", "ANTHROPIC_VERTEX_PROJECT_ID": "p"}
    ids = select_platform(env).models
    assert ids.wire("claude-haiku-4-5") == "claude-haiku-4-5@20251001"
    assert ids.wire("claude-haiku-4-5-20251001") == "claude-haiku-4-5@20251001"
    assert ids.wire("claude-opus-5-5") == "claude-opus-5-5"
    mantle = select_platform({"CLAUDE_CODE_USE_MANTLE": "1", "AWS_REGION": "us-east-1"}).models
    assert mantle.wire("claude-sonnet-5-5") == "anthropic.claude-sonnet-5-5"
    foundry = select_platform(
        {"CLAUDE_CODE_USE_FOUNDRY": "1", "ANTHROPIC_DEFAULT_OPUS_MODEL": "my-opus"}
    ).models
    assert (
        foundry.wire("claude-opus-5-5") == "my-opus"
        and foundry.wire("claude-sonnet-5-5") == "claude-sonnet-5-5"
    )


@pytest.mark.parametrize(
    ("sent", "known"),
    [
        ("us.anthropic.claude-sonnet-5-5", "claude-sonnet-5-5"),
        ("global.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5-20251001"),
        ("anthropic.claude-opus-5-5", "claude-opus-5-5"),
        ("claude-haiku-4-5@20251001", "claude-haiku-4-5-20251001"),
        ("my-deployment", "my-deployment"),
    ],
)
def test_a_platform_id_names_its_anthropic_model(sent: str, known: str) -> None:
    assert anthropic_id(sent) == known


def test_vertex_needs_a_region_and_a_project_and_finds_them_in_claude_codes_order(tmp_path: Path) -> None:
    missing = select_platform({"CLAUDE_CODE_USE_VERTEX": "1"})
    assert missing.problem is not None
    assert "CLOUD_ML_REGION" in missing.problem and "ANTHROPIC_VERTEX_PROJECT_ID" in missing.problem
    key = tmp_path / "sa.json"
    key.write_text(json.dumps({"type": "service_account", "project_id": "from-file"}))
    env = {
        "CLAUDE_CODE_USE_VERTEX": "1",
        "CLOUD_ML_REGION": "us-east5",
        "ANTHROPIC_VERTEX_PROJECT_ID": "from-anthropic-var",
        "GOOGLE_APPLICATION_CREDENTIALS": str(key),
    }
    platform = select_platform(env)
    assert platform.problem is None
    assert str(platform.project) == "from-file (from GOOGLE_APPLICATION_CREDENTIALS's file)"
    assert select_platform({**env, "GOOGLE_CLOUD_PROJECT": "g"}).project.value == "g"  # type: ignore[union-attr]
    assert platform.secret_files[0] == key and set(GOOGLE_SECRETS) <= set(platform.secrets)
    assert platform.price_factor == pytest.approx(1.1)
    assert select_platform({**env, "CLOUD_ML_REGION": "global"}).price_factor == 1
    assert "web search" not in platform.status() and "web fetch" in platform.status()


def test_vertex_hides_the_application_default_credentials_where_google_auth_reads_them() -> None:
    """google-auth reads them under `CLOUDSDK_CONFIG` when it is set, else `~/.config/gcloud`:
    the file hidden from the tools is that one (the policy review found the HOME one hidden
    while the client signed in with the other)."""
    env = {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5", "HOME": "/home/u"}
    env["ANTHROPIC_VERTEX_PROJECT_ID"] = "p"
    adc = "application_default_credentials.json"
    assert select_platform(env).secret_files == (Path("/home/u/.config/gcloud") / adc,)
    moved = select_platform({**env, "CLOUDSDK_CONFIG": "/opt/gcloud"})
    assert moved.secret_files == (Path("/opt/gcloud") / adc,)


def test_foundry_needs_a_resource_or_a_base_url() -> None:
    assert select_platform({"CLAUDE_CODE_USE_FOUNDRY": "1"}).problem is not None
    platform = select_platform({"CLAUDE_CODE_USE_FOUNDRY": "1", "ANTHROPIC_FOUNDRY_RESOURCE": "acme"})
    assert platform.base_url is not None
    assert platform.base_url.value == "https://acme.services.ai.azure.com/anthropic/"
    assert "Microsoft Entra ID" in platform.credential
    keyed = select_platform(
        {"CLAUDE_CODE_USE_FOUNDRY": "1", "ANTHROPIC_FOUNDRY_RESOURCE": "a", "ANTHROPIC_FOUNDRY_API_KEY": "k"}
    )
    assert keyed.credential == "ANTHROPIC_FOUNDRY_API_KEY" and "k" not in keyed.status().split()


def test_the_cloud_keys_are_taken_only_by_the_platform_that_uses_them() -> None:
    keys = {"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "s"}
    assert set(AWS_SECRETS).isdisjoint(select_platform(keys).secrets)
    bedrock = select_platform({**keys, "CLAUDE_CODE_USE_BEDROCK": "1"})
    assert set(AWS_SECRETS) <= set(bedrock.secrets) and set(ALWAYS_SECRET) <= set(bedrock.secrets)
    assert bedrock.credential.startswith("SigV4 with AWS_ACCESS_KEY_ID")
    assert "s" not in bedrock.status().split()
    aws = select_platform({"CLAUDE_CODE_USE_ANTHROPIC_AWS": "1"})
    assert aws.problem is not None and "ANTHROPIC_AWS_WORKSPACE_ID" in aws.problem


def test_bedrock_lacks_what_it_lacks_and_regional_profiles_cost_more() -> None:
    platform = select_platform({"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1"})
    status = platform.status()
    for missing in ("the Models API", "token counting", "web search", "web fetch"):
        assert missing in status
    assert platform.price_factor == pytest.approx(1.1) and "+10%" in status
    regional = builtin_prices(platform.price_factor)["claude-sonnet-5-5"]
    assert regional.input == pytest.approx(builtin_prices()["claude-sonnet-5-5"].input * 1.1)
    glob = select_platform({"CLAUDE_CODE_USE_BEDROCK": "1", "ANTHROPIC_BEDROCK_REGION_PREFIX": "global"})
    assert glob.price_factor == 1


def test_custom_headers_are_name_value_lines() -> None:
    env = {"ANTHROPIC_CUSTOM_HEADERS": "X-Amzn-Bedrock-GuardrailIdentifier: g1\nbroken line\nX-Two:  b "}
    assert custom_headers(env) == {"X-Amzn-Bedrock-GuardrailIdentifier": "g1", "X-Two": "b"}


def test_anthropic_model_fills_in_when_no_model_is_configured() -> None:
    assert Config.from_sources({}, {"ANTHROPIC_MODEL": "claude-opus-5-5"}).model == "claude-opus-5-5"
    both = {"ANTHROPIC_MODEL": "claude-opus-5-5", "ACP_AGENT_MODEL": "claude-haiku-5-5"}
    assert Config.from_sources({}, both).model == "claude-haiku-5-5"
    assert Config.from_sources({"model": "claude-test-1"}, both).model == "claude-test-1"


# ── the helpers ──────────────────────────────────────────────────────────────────────────────
def test_helpers_are_read_from_settings_as_strings_only() -> None:
    helpers = helpers_from_settings(
        {"apiKeyHelper": "echo k", "awsAuthRefresh": 3, "awsCredentialExport": " "}, "f"
    )
    assert helpers.names() == ["apiKeyHelper"]
    assert api_key_ttl({"CLAUDE_CODE_API_KEY_HELPER_TTL_MS": "1500"}) == 1.5
    assert api_key_ttl({"CLAUDE_CODE_API_KEY_HELPER_TTL_MS": "x"}) == 300


def test_a_cached_output_is_asked_again_when_its_time_is_up_or_it_is_expired() -> None:
    now = [0.0]
    outputs = iter(["one", "two", "three"])
    cache = CachedOutput(lambda: (next(outputs), 10.0), clock=lambda: now[0])
    assert cache.get() == "one" and cache.get() == "one"
    now[0] = 10.0
    assert cache.value is None and cache.get() == "two"
    cache.expire()
    assert cache.get() == "three" and cache.runs == 3


def test_aws_credential_export_reads_both_shapes_and_keeps_them_until_expiry_less_five_minutes() -> None:
    nested = json.dumps(
        {
            "Credentials": {
                "AccessKeyId": "AK",
                "SecretAccessKey": "SK",
                "SessionToken": "T",
                "Expiration": "2030-01-01T01:00:00Z",
            }
        }
    )
    keys = aws_keys_from_export(nested, now=1893456000.0)  # 2030-01-01T00:00:00Z
    assert (keys.access_key, keys.secret_key, keys.session_token) == ("AK", "SK", "T")
    assert keys.seconds == pytest.approx(3600 - 300)
    flat = aws_keys_from_export(json.dumps({"Version": 1, "AccessKeyId": "A", "SecretAccessKey": "S"}))
    assert flat.session_token is None and flat.seconds == 3600
    with pytest.raises(AuthRequired, match="no AccessKeyId"):
        aws_keys_from_export('{"Version": 1}')
    with pytest.raises(AuthRequired, match="did not print JSON") as caught:
        aws_keys_from_export("SECRET-NOT-JSON")
    assert "SECRET" not in str(caught.value)


# ── errors ───────────────────────────────────────────────────────────────────────────────────
def test_cloud_errors_say_what_to_do() -> None:
    bedrock = select_platform(
        {"CLAUDE_CODE_USE_BEDROCK": "1", "AWS_REGION": "us-east-1", "AWS_PROFILE": "dev"}
    )
    denied = explain(
        bedrock,
        403,
        "AccessDeniedException",
        "You don't have access to the model with the specified model ID.",
    )
    assert denied is not None and denied.not_credentials and "Model access" in denied.text
    expired = explain(
        bedrock, 403, "ExpiredTokenException", "The security token included in the request is expired"
    )
    assert expired is not None and expired.expired and "aws sso login --profile dev" in expired.text
    vertex = select_platform(
        {"CLAUDE_CODE_USE_VERTEX": "1", "CLOUD_ML_REGION": "us-east5", "ANTHROPIC_VERTEX_PROJECT_ID": "p1"}
    )
    missing = explain(vertex, 404, "NOT_FOUND", "Publisher model not found")
    assert missing is not None and missing.not_credentials and "project p1" in missing.text
    assert explain(select_platform({}), 404, "not_found_error", "model: x") is None
