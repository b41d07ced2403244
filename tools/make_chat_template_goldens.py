"""Writes tests/goldens/chat_templates/renders.json: what transformers renders for real chat templates.

For every *.jinja file of the templates folder (by default the llama.cpp test templates that
tools/fetch_chat_templates.sh extracts into models/chat-templates/llama-cpp-python-0.3.36), and
for every conversation of CONVERSATIONS below, this renders the template the way
`PreTrainedTokenizerBase.apply_chat_template(..., tokenize=False)` does:

  * keys whose value is None are dropped from every message;
  * continue_final_message together with add_generation_prompt is rejected;
  * the tokenizer's special tokens (SPECIAL_TOKENS) are passed as template variables;
  * then transformers.utils.chat_template_utils.render_jinja_template does the rest (its own
    sandboxed Jinja environment, globals, tojson filter, reasoning aliases and the
    continue_final_message handling).

The clock that the template global strftime_now reads is frozen at NOW, so the goldens do not
depend on the day they are made.

Each render gives either a string, recorded by its UTF-8 length and XXH3-128 digest, or an
exception, recorded by its type and message, and whether it is the template's own
raise_exception(...) call.

Needs transformers, jinja2 and xxhash (tools/requirements-tools.txt). Run from anywhere:

  .venv-tools/bin/python tools/make_chat_template_goldens.py [--texts DIR]
"""
import argparse
import copy
import datetime as datetime_module
import hashlib
import json
import sys
import traceback
from pathlib import Path

import jinja2
import jinja2.exceptions
import transformers
import transformers.utils.chat_template_utils as chat_template_utils
import xxhash

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TEMPLATES = ROOT / "models" / "chat-templates" / "llama-cpp-python-0.3.36"
OUTPUT = ROOT / "tests" / "goldens" / "chat_templates" / "renders.json"
SOURCE = "llama-cpp-python 0.3.36 sdist, vendor/llama.cpp/models/templates"

NOW = datetime_module.datetime(2026, 1, 15, 10, 30, 0)

SPECIAL_TOKENS = {
    "bos_token": "<s>",
    "eos_token": "</s>",
    "unk_token": "<unk>",
    "pad_token": "<pad>",
}

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather in a given location.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {
                    "type": "string",
                    "description": "The city to look up, e.g. Paris or Zürich.",
                },
                "unit": {
                    "type": "string",
                    "enum": ["celsius", "fahrenheit"],
                    "description": "The unit of the temperature.",
                },
            },
            "required": ["location"],
        },
    },
}


def conversation(messages, tools=None, add_generation_prompt=False, continue_final_message=False):
    return {
        "messages": messages,
        "tools": tools,
        "add_generation_prompt": add_generation_prompt,
        "continue_final_message": continue_final_message,
    }


# The key order of every dict here is the order the templates see (and the order in
# renders.json): tojson and `for key, value in x.items()` depend on it.
CONVERSATIONS = {
    "system_user": conversation(
        [
            {"role": "system", "content": "You are a helpful assistant. Keep your answers short."},
            {"role": "user", "content": "Quelle est la capitale de la France ?\nRéponds en un mot."},
        ],
        add_generation_prompt=True,
    ),
    "user": conversation(
        [
            {"role": "user", "content": "Hello! Can you recommend a good café ☕ near the station?"},
        ],
        add_generation_prompt=True,
    ),
    "multi_turn": conversation(
        [
            {"role": "user", "content": "What is 2 + 2?"},
            {"role": "assistant", "content": "2 + 2 = 4."},
            {"role": "user", "content": "And how do you say \"four\" in Japanese? 日本語で教えてください。"},
        ],
        add_generation_prompt=True,
    ),
    "no_generation_prompt": conversation(
        [
            {"role": "user", "content": "Name one primary colour."},
            {"role": "assistant", "content": "Blue — the colour of the sky."},
        ],
        add_generation_prompt=False,
    ),
    "assistant_prefill": conversation(
        [
            {"role": "user", "content": "Write a haiku about the sea."},
            {"role": "assistant", "content": "Waves fold into foam,\nsalt wind"},
        ],
        add_generation_prompt=False,
        continue_final_message=True,
    ),
    "tools": conversation(
        [
            {"role": "system", "content": "You are a weather assistant. Use the tools when they help."},
            {"role": "user", "content": "What's the weather like in Paris today, in °C?"},
            {
                "role": "assistant",
                # As OpenAI-style APIs return it; dropped (as None) before rendering.
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": {"location": "Paris", "unit": "celsius"},
                        },
                    }
                ],
            },
            {
                "role": "tool",
                "tool_call_id": "call_1",
                "name": "get_weather",
                "content": "{\"temperature\": 21}",
            },
        ],
        tools=[WEATHER_TOOL],
        add_generation_prompt=True,
    ),
    "reasoning": conversation(
        [
            {"role": "user", "content": "Is 17 a prime number?"},
            {
                "role": "assistant",
                "reasoning_content": "17 is odd, and it is not divisible by 3. √17 < 5, so no other divisor is possible.",
                "content": "Yes, 17 is prime.",
            },
            {"role": "user", "content": "What about 21?"},
        ],
        add_generation_prompt=True,
    ),
    "content_blocks": conversation(
        [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Translate to English: « Où est la gare ? »"},
                ],
            },
        ],
        add_generation_prompt=True,
    ),
}


class FrozenDatetime(datetime_module.datetime):
    """datetime whose now() is always NOW (in the time zone asked for, if any)."""

    @classmethod
    def now(cls, tz=None):
        return cls.combine(NOW.date(), NOW.time(), tzinfo=tz)


def freeze_clock():
    # strftime_now() in the compiled environment calls the module's `datetime.now()` at render time.
    if chat_template_utils.datetime is not datetime_module.datetime:
        sys.exit("transformers.utils.chat_template_utils.datetime is not datetime.datetime; "
                 "this transformers version reads the clock differently")
    chat_template_utils.datetime = FrozenDatetime


def apply_chat_template(chat_template, messages, tools, add_generation_prompt, continue_final_message):
    """PreTrainedTokenizerBase.apply_chat_template(tokenize=False) for one conversation."""
    conversations = [copy.deepcopy(messages)]
    if len(conversations[0]) == 0:
        raise ValueError("Cannot apply chat template to an empty conversation. Provide at least one message.")
    conversations = [[{k: v for k, v in msg.items() if v is not None} for msg in chat] for chat in conversations]
    if continue_final_message and add_generation_prompt:
        raise ValueError(
            "continue_final_message and add_generation_prompt are not compatible. Use continue_final_message "
            "when you want the model to continue the final message, and add_generation_prompt when you want "
            "to add a header that will prompt it to start a new assistant message instead."
        )
    template_kwargs = dict(SPECIAL_TOKENS)
    rendered, _ = chat_template_utils.render_jinja_template(
        conversations=conversations,
        tools=copy.deepcopy(tools),
        documents=None,
        chat_template=chat_template,
        return_assistant_tokens_mask=False,
        continue_final_message=continue_final_message,
        add_generation_prompt=add_generation_prompt,
        **template_kwargs,
    )
    return rendered[0]


def raised_by_template(exc):
    """True when exc is the TemplateError of the template's own raise_exception(...) call."""
    if type(exc) is not jinja2.exceptions.TemplateError:
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    return bool(frames) and frames[-1].name == "raise_exception" and \
        Path(frames[-1].filename).resolve() == Path(chat_template_utils.__file__).resolve()


def main():
    parser = argparse.ArgumentParser(
        description="Render every chat template of a folder with transformers for a fixed set of "
                    "conversations, and write the lengths and XXH3-128 digests of the results (or "
                    f"the errors) to {OUTPUT.relative_to(ROOT)}.",
        epilog="The templates come from tools/fetch_chat_templates.sh. Conversations: "
               + ", ".join(CONVERSATIONS) + ".",
    )
    parser.add_argument("--templates", type=Path, default=DEFAULT_TEMPLATES, metavar="DIR",
                        help="folder of *.jinja files (default: %(default)s)")
    parser.add_argument("--texts", type=Path, metavar="DIR",
                        help="also write each render to DIR/<template stem>/<conversation>.txt "
                             "(and each error to <conversation>.error.txt), for debugging")
    parser.add_argument("--output", type=Path, default=OUTPUT, metavar="FILE",
                        help="where to write the goldens (default: %(default)s)")
    args = parser.parse_args()

    paths = sorted(args.templates.glob("*.jinja"), key=lambda p: p.name)
    if not paths:
        sys.exit(f"no *.jinja files in {args.templates} (run tools/fetch_chat_templates.sh)")

    freeze_clock()

    templates = {}
    renders = []
    for path in paths:
        # As transformers reads chat_template.jinja.
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
        templates[path.name] = {"sha256": hashlib.sha256(path.read_bytes()).hexdigest()}
        for name, conv in CONVERSATIONS.items():
            entry = {"template": path.name, "conversation": name}
            try:
                out = apply_chat_template(text, conv["messages"], conv["tools"],
                                          conv["add_generation_prompt"], conv["continue_final_message"])
            except Exception as exc:  # every failure is a result to record
                entry["error_type"] = type(exc).__name__
                entry["error"] = str(exc)
                entry["raised_by_template"] = raised_by_template(exc)
                out = None
            if out is not None:
                if not isinstance(out, str):
                    sys.exit(f"{path.name} / {name}: render gave {type(out).__name__}, not str")
                data = out.encode("utf-8")
                entry["length"] = len(data)
                entry["xxh3_128"] = xxhash.xxh3_128_hexdigest(data)
            renders.append(entry)
            if args.texts is not None:
                folder = args.texts / path.stem
                folder.mkdir(parents=True, exist_ok=True)
                if out is not None:
                    (folder / f"{name}.error.txt").unlink(missing_ok=True)
                    (folder / f"{name}.txt").write_bytes(out.encode("utf-8"))
                else:
                    (folder / f"{name}.txt").unlink(missing_ok=True)
                    (folder / f"{name}.error.txt").write_text(
                        f"{entry['error_type']} (raised_by_template={str(entry['raised_by_template']).lower()})\n"
                        f"{entry['error']}\n", encoding="utf-8")

    golden = {
        "made_by": "tools/make_chat_template_goldens.py",
        "transformers": transformers.__version__,
        "jinja2": jinja2.__version__,
        "xxhash": xxhash.VERSION,
        "source": SOURCE,
        "now": NOW.isoformat(),
        "special_tokens": SPECIAL_TOKENS,
        "conversations": CONVERSATIONS,
        "templates": templates,
        "renders": renders,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    with open(args.output, "w", encoding="utf-8") as handle:
        json.dump(golden, handle, indent=1, ensure_ascii=False)
        handle.write("\n")

    ok = sum("xxh3_128" in r for r in renders)
    by_template = sum(r.get("raised_by_template", False) for r in renders)
    print(f"{len(paths)} templates x {len(CONVERSATIONS)} conversations: {ok} rendered, "
          f"{by_template} raised by the template, {len(renders) - ok - by_template} other errors "
          f"-> {args.output}")


if __name__ == "__main__":
    main()
