"""The accumulator that carries scan facts from tasks: a task run again replaces its facts."""

from __future__ import annotations

import base64
import pickle
from collections import OrderedDict

from auger.scan.spec import FileSplit
from auger.spark.scan_report import TaskFacts, _FactsParam, task_key


def test_a_retried_task_replaces_its_facts_and_tasks_add_up() -> None:
    param = _FactsParam()
    total = param.zero(OrderedDict())
    one = task_key([FileSplit("/d/a.json")])
    two = task_key([FileSplit("/d/b.json", start=0, length=10)])
    param.addInPlace(total, {7: {one: TaskFacts(("/d/a.json",), 5)}})
    param.addInPlace(total, {7: {two: TaskFacts(("/d/b.json",), 3)}})
    param.addInPlace(total, {7: {one: TaskFacts(("/d/a.json",), 5)}})  # the same task again
    assert sum(f.rows for f in total[7].values()) == 8
    assert set(total) == {7}


def test_facts_and_the_parameter_survive_pickling() -> None:
    facts = TaskFacts(("/d/a.json",), 2, {"/d/a.json": (1, [4])})
    back = pickle.loads(base64.b64decode(base64.b64encode(pickle.dumps((3, facts)))))
    assert back == (3, facts)
    assert isinstance(pickle.loads(pickle.dumps(_FactsParam())), _FactsParam)
