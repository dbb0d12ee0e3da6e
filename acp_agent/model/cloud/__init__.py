"""Where Claude runs: the platform chosen from one mapping (`platforms.py`: the Claude API,
Bedrock, Vertex AI, Foundry, a gateway; what the cloud tools' own files say, `cloud_config.py`),
its model ids (`platform_ids.py`), its client built late (`platform_clients.py`, the credential
helpers run by `credential_helpers.py`), and its errors in words (`platform_errors.py`).
"""
