"""The user's Claude Code setup (issue 33): the settings files (`settings_files.py`, their JSON read
by `settings_json.py`, and a hook's, with a bound on its depth by `json_text.py`) and what they hold
for a session (`setup.py`: `ClaudeSetup`, the rule engine's `RuleSource`; the rules and the engine
are `permissions/`'s), under the policy an administrator sets (`managed.py`; which MCP servers may
start, `mcp_policy.py`; which models, `model_allowlist.py`), what the agent's own configuration
takes from the managed and the user's files at start-up (`agent_settings.py`), the "always"
answers written back (`saved_rules.py`) and whose hand made the local settings (`local_owner.py`),
the trust a project needs before what it widens takes effect (`trust.py`: which keys widen,
`settings_keys.py`; the items its files widen, `widenings.py`; the `env` variables never taken
from a project, `project_env.py`; what a write to the agent's own files would enable,
`write_guard.py`), and the hooks: read (`hook_config.py`, the events in `hook_events.py`), run
(`hook_process.py`), their input and answers (`hook_payloads.py`), and run for a session's turns
(`hooks.py`).

May import `permissions/`, `tools/`, `turn/`, `model/` and the leaves; imported by `editor/` (the
permission question), `commands/` (the tool names), `options/` (the models allowed),
`client_options.py`, the lifecycle core, and `cli.py` and `app.py` (the start-up settings), never
the reverse.
"""
