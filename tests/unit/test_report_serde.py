import json

import pytest

from gdrdiag.model import BenchResult, Finding, Report, SampleStats, Severity, Status
from gdrdiag.model.machine import CudaDeviceFacts, HostInfo, MachineInfo
from gdrdiag.model.params import CopyMetrics, CopyParams
from gdrdiag.model.serde import SchemaError
from gdrdiag.model.vocabulary import MemoryKind


def sample_report() -> Report:
    res = BenchResult(
        key="copy_h2d_pinned",
        status=Status.OK,
        params=CopyParams(size_bytes=4096, memory=MemoryKind.PINNED),
        unit="GB/s",
        samples=(1.0, 2.0, 3.0),
        stats=SampleStats.of([1.0, 2.0, 3.0]),
        metrics=CopyMetrics(seconds_median=0.5, us_per_block=None),
        method="events",
        provider="cuda",
        verified=True,
    )
    waived = BenchResult.waived("copy_sweep", "no GPU")
    finding = Finding(code="PCIE-LINK-DOWNGRADED", severity=Severity.WARN, title="t", evidence=("a = 1",))
    machine = MachineInfo(
        host=HostInfo(hostname="h"),
        cuda_driver_version=13000,
        cuda_devices=(
            CudaDeviceFacts(0, "H200", "0000:00:06.0", (9, 0), 1, 132, {"DMA_BUF_SUPPORTED": 1, "X": None}),
        ),
        unknown={"nics": "no RDMA devices"},
    )
    return Report(tool_version="0.1.0", machine=machine, results=(res, waived), findings=(finding,))


def test_report_round_trips_exactly():
    rep = sample_report()
    again = Report.from_json(rep.to_json())
    assert again == rep
    assert again.to_json() == rep.to_json()


def test_sample_stats():
    st = SampleStats.of([3.0, 1.0, 2.0, 10.0])
    assert (st.median, st.minimum, st.maximum, st.n) == (2.5, 1.0, 10.0, 4)


@pytest.mark.parametrize(
    "mutate,where",
    [
        (lambda d: d["results"][0].__setitem__("status", "MAYBE"), "$.results[0].status"),
        (lambda d: d["results"][0].__setitem__("samples", ["x"]), "$.results[0].samples[0]"),
        (lambda d: d["results"][0]["stats"].__setitem__("n", 1.5), "$.results[0].stats.n"),
        (lambda d: d.__setitem__("results", {}), "$.results"),
        (
            lambda d: d["results"][0]["metrics"].__setitem__("us_per_block", "fast"),
            "$.results[0].metrics.us_per_block",
        ),
        (lambda d: d["results"][0]["metrics"].__setitem__("bench", "gather2"), "$.results[0].metrics.bench"),
        (lambda d: d["results"][0]["params"].__setitem__("memory", "hbm"), "$.results[0].params.memory"),
        (lambda d: d["findings"][0].__setitem__("severity", 3), "$.findings[0].severity"),
        (lambda d: d["results"][0].pop("key"), "missing field 'key'"),
    ],
)
def test_wrong_types_are_refused_with_the_path(mutate, where):
    data = json.loads(sample_report().to_json())
    mutate(data)
    with pytest.raises(SchemaError, match=where.replace("$", r"\$").replace("[", r"\[").replace("]", r"\]")):
        Report.from_json(json.dumps(data))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        "{",
        '{"schema_version": 99}',
        '{"schema_version": "1"}',
        '{"schema_version": 1, "results": [' * 5000,
        '{"schema_version": 1, "results": [{"key": "k", "status": "OK", "samples": [1e999]}]}',
        '{"schema_version": 1, "results": [{"key": "k", "status": "OK", "params": {"n": NaN}}]}',
    ],
)
def test_hostile_json_is_refused(text):
    with pytest.raises(SchemaError):
        Report.from_json(text)


def test_deep_nesting_is_refused():
    deep = (
        '{"schema_version": 1, "results": [{"key": "k", "status": "OK", "params": {"a": '
        + "[" * 100000
        + "]" * 100000
        + "}}]}"
    )
    with pytest.raises(SchemaError):
        Report.from_json(deep)


def _dataclass_objects(obj):
    """Every dataclass instance inside ``obj`` (depth first), ``obj`` included."""
    import dataclasses

    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        yield obj
        for f in dataclasses.fields(obj):
            yield from _dataclass_objects(getattr(obj, f.name))
    elif isinstance(obj, (list, tuple)):
        for item in obj:
            yield from _dataclass_objects(item)
    elif isinstance(obj, dict):
        for item in obj.values():
            yield from _dataclass_objects(item)


@pytest.mark.parametrize("name", ["baremetal_hgx", "vm_guest_kvm", "gpu_machine_h200"])
def test_decoded_objects_are_what_their_constructor_makes(name):
    """The decoder makes records without calling ``__init__``: each must equal, field for field
    and attribute for attribute, the object its class's constructor makes from the same values."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[1] / "fixtures" / "reports" / f"{name}.json").read_text()
    seen = 0
    for obj in _dataclass_objects(Report.from_json(text)):
        rebuilt = type(obj)(**vars(obj))
        assert vars(obj) == vars(rebuilt) and list(vars(obj)) == list(vars(rebuilt)), type(obj)
        assert obj == rebuilt
        seen += 1
    assert seen > 100


def test_a_missing_field_takes_its_default_and_post_init_still_runs():
    data = json.loads(sample_report().to_json())
    del data["results"][0]["settings"]
    data["results"][1]["params"] = None  # BenchResult.__post_init__ fills in the bench's params
    rep = Report.from_json(json.dumps(data))
    assert rep.results[0].settings == type(rep.results[0].settings)()
    assert rep.results[1].params == BenchResult.waived("copy_sweep", "no GPU").params
