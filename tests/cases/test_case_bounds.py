"""A case file stating more GPUs or NICs than a node has is refused before its pairs are built.

Four kilobytes of TOML can list a thousand GPUs in a switch; every GPU x NIC and GPU x GPU pair
would be built from them. The same limits as a bundle's apply (``gdrdiag.inspect.collect``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gdrdiag.errors import UserInputError
from gdrdiag.inspect.collect import MAX_GPUS, MAX_RDMA_DEVICES
from tests.cases.casefile import load

_HEAD = 'url = "https://example.org/t"\ntitle = "t"\nsource = "blog"\ncause = "HEALTHY"\n'


def _case(tmp_path: Path, body: str):
    path = tmp_path / "t.toml"
    path.write_text(_HEAD + body)
    return load(path)


@pytest.mark.parametrize(
    "body, words",
    [
        (f'[machine]\ngpus = {MAX_GPUS + 1}\nnic = "ConnectX-7"\n', f"{MAX_GPUS + 1} GPUs"),
        (f'[machine]\nnics = {MAX_RDMA_DEVICES + 1}\nnic = "ConnectX-7"\n', f"{MAX_RDMA_DEVICES + 1} RDMA"),
        (  # a switch listing 1,000 GPUs of a machine that states one
            f"[machine]\n[[machine.switches]]\ngpus = {list(range(1000))}\nnics = [0]\n",
            "1000 GPUs",
        ),
    ],
)
def test_too_many_devices_are_refused_in_one_line(tmp_path, body, words):
    with pytest.raises(UserInputError) as exc:
        _case(tmp_path, body)
    assert words in str(exc.value) and "\n" not in str(exc.value)


def test_a_case_at_the_limit_is_built(tmp_path):
    switch = f"[[machine.switches]]\ngpus = {list(range(MAX_GPUS))}\nnics = [0, 1]\n"
    case = _case(tmp_path, f'[machine]\ngpus = {MAX_GPUS}\nnics = 2\nnic = "ConnectX-7"\n' + switch)
    machine = case.report.machine
    assert len(machine.gpus) == MAX_GPUS and len(machine.topology) == 2 * MAX_GPUS
