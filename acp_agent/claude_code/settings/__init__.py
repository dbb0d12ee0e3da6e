"""The settings files and the formats they share: found and read in Claude Code's order
(`settings_files.py`; their JSON by `settings_json.py`, every JSON text a project, HOME or a hook
gives with a bound on its depth by `json_text.py`; a command's or memory file's YAML front matter,
`frontmatter.py`), which keys there are and which widen (`settings_keys.py`), the policy an
administrator sets (`managed.py`; which MCP servers may start, `mcp_policy.py`; which models,
`model_allowlist.py`), what the agent's own configuration takes from them at start-up
(`agent_settings.py`), the `env` variables never taken from a project (`project_env.py`), the
hook events (`hook_events.py`), and the "always" answers written back (`saved_rules.py`) with the
record of whose hand made the local file (`local_owner.py`).
"""
