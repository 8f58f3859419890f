"""Run by ``test_gptme_loads.py`` in a virtualenv holding gptme 0.35.1 (never imported by the
suite): load a conversation folder with gptme's own ``LogManager.load`` and print, as one JSON
document, the messages gptme read (``Message.to_dict``) and whether gptme, writing them again
with its own ``Log.write_jsonl``, writes the very same bytes."""

import json
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

from gptme.logmanager import LogManager

folder = Path(sys.argv[1])
with LogManager.load(folder, lock=False) as manager:
    log = manager.log
    with tempfile.TemporaryDirectory() as scratch:
        again = Path(scratch) / "conversation.jsonl"
        log.write_jsonl(again)
        same = again.read_bytes() == (folder / "conversation.jsonl").read_bytes()
    print(
        json.dumps(
            {
                "gptme": version("gptme"),
                "messages": [message.to_dict() for message in log.messages],
                "written_again_the_same": same,
            }
        )
    )
