"""The fake API's rules, as strict as the real one's: per-model 400s (`model_rules.py`, D13),
image and request-size refusals (`image_rules.py`), `document` rules (`document_rules.py`),
server-tool rules (`server_rules.py`), and a request's blocks found for them (`request_blocks.py`).
"""
