#!/usr/bin/env python3
"""Writes scenario.json: the ocgen script of the session-blame fixture.

One project, `billing`, whose file billing/tiers.py is written and edited by
five sessions in turn (write, edit, a failed test run right after an edit,
apply_patch, an edit that does not apply), so blame has several authors to
tell apart and pitfalls to find. Regenerate the fixture with the recipe in
testdata/opencode/README.md (section "blame").
"""
import json
import os

TEST = '''import unittest

from billing.tiers import price_for


class Tiers(unittest.TestCase):
    def test_small(self):
        self.assertEqual(price_for(5), 0.5)

    def test_bulk(self):
        self.assertEqual(price_for(500), 40.0)
'''

TIERS = '''"""Tiered unit prices for the billing service."""

TIERS = [
    (100, 0.10),
    (1000, 0.08),
]


def price_for(units):
    for limit, unit_price in TIERS:
        if units <= limit:
            return units * unit_price
    return units * TIERS[-1][1]
'''

# The traceback's "File ..." lines name the Python install of the machine
# that generated the fixture; they are left out (the exit code is kept), so
# the committed history names no path of that machine.
RUN_TESTS = {"name": "bash", "args": {
    "command": "out=$(python3 -m unittest discover -s tests -t . 2>&1); rc=$?; printf '%s\\n' \"$out\" | grep -v '^  File '; exit $rc",
    "description": "Run the billing unit tests"}}


def tool(name, **args):
    return {"name": name, "args": args}


sessions = [
    {"key": "B1", "project": "billing", "title": "Add a tiered price table", "turns": [
        {"prompt": "Create billing/tiers.py with a tiered unit price table and a price_for(units) function; tests/test_tiers.py says what it must do.",
         "steps": [
             {"tools": [tool("read", filePath="{{dir}}/tests/test_tiers.py")]},
             {"text": "I'll write the tier table.", "tools": [tool("write", filePath="{{dir}}/billing/tiers.py", content=TIERS)]},
             {"tools": [RUN_TESTS]},
             {"text": "Added billing/tiers.py: two tiers (up to 100 units at 0.10, up to 1000 at 0.08); the tests pass."},
         ]}]},
    {"key": "B2", "project": "billing", "title": "Add a minimum charge", "turns": [
        {"prompt": "Add a MINIMUM_CHARGE constant of 1.00 (a Decimal) to billing/tiers.py.",
         "steps": [
             {"tools": [tool("edit", filePath="{{dir}}/billing/tiers.py",
                             oldString="    (1000, 0.08),\n]\n",
                             newString="    (1000, 0.08),\n]\n\nMINIMUM_CHARGE = Decimal(\"1.00\")  # per invoice\n")]},
             {"tools": [RUN_TESTS]},
             {"reasoning": "The tests fail with NameError: Decimal is used but never imported. Import it.",
              "tools": [tool("edit", filePath="{{dir}}/billing/tiers.py",
                             oldString="\"\"\"Tiered unit prices for the billing service.\"\"\"\n",
                             newString="\"\"\"Tiered unit prices for the billing service.\"\"\"\n\nfrom decimal import Decimal\n")]},
             {"tools": [RUN_TESTS]},
             {"text": "Added MINIMUM_CHARGE = Decimal(\"1.00\"); the first test run failed on a missing import, fixed."},
         ]}]},
    {"key": "B3", "project": "billing", "title": "Round tier prices to cents", "turns": [
        {"prompt": "price_for returns values like 40.00000000000001; round tier prices to cents.",
         "steps": [
             {"tools": [tool("edit", filePath="{{dir}}/billing/tiers.py",
                             oldString="        if units <= limit:\n            return units * unit_price\n",
                             newString="        if units <= limit:\n            return round(units * unit_price, 2)\n")]},
             {"tools": [RUN_TESTS]},
             {"text": "price_for now rounds the tier price to cents."},
         ]}]},
    {"key": "B4", "project": "billing", "title": "Add an enterprise tier", "model": "gpt-5-mock", "turns": [
        {"prompt": "Add an enterprise tier: up to 10000 units at 0.06.",
         "steps": [
             {"tools": [tool("apply_patch", patchText="*** Begin Patch\n*** Update File: {{dir}}/billing/tiers.py\n@@\n     (100, 0.10),\n     (1000, 0.08),\n+    (10000, 0.06),\n ]\n*** End Patch")]},
             {"text": "Added the enterprise tier (10000 units at 0.06)."},
         ]}]},
    {"key": "B5", "project": "billing", "title": "Cap the bulk tier price", "turns": [
        {"prompt": "Lower the bulk tier in billing/tiers.py to 0.07.",
         "steps": [
             {"tools": [tool("edit", filePath="{{dir}}/billing/tiers.py",
                             oldString="    (1000, 0.075),\n",
                             newString="    (1000, 0.07),\n")]},
             {"text": "The edit did not apply: the file has no 0.075 tier. I left the file as it was."},
         ]}]},
]

scenario = {
    "name": "recall-blame",
    "root": "/tmp/ocgen/recall-blame",
    "projects": [{"name": "billing", "files": {
        "README.md": "# billing\n\nUnit prices and invoices.\n",
        "billing/__init__.py": "",
        "tests/__init__.py": "",
        "tests/test_tiers.py": TEST,
    }}],
    "sessions": sessions,
}

here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "scenario.json"), "w") as f:
    json.dump(scenario, f, indent=1)
    f.write("\n")
