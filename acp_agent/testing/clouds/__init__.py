"""The platforms faked offline: Bedrock (`bedrock.py`: SigV4 and the event-stream), Vertex AI
(`vertex.py`, with its token endpoint), and a gateway or Foundry in front of the fake
(`platform_front.py`).
"""
