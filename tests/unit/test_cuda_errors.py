"""The CUDA error boundary (hw/cuda.py: check, call, init) and the CUresult explanation table.

No GPU is needed: results are built from the real ``cuda.bindings.driver.CUresult`` enum (importable
without a driver), and where the boundary would ask the driver for its error text a stand-in
driver module answers, so the tests read the same on a machine with or without libcuda.
"""

from __future__ import annotations

import types

import pytest

from gdrdiag.errors import HardwareError, NotSupported
from gdrdiag.hw import cuda

drv = pytest.importorskip("cuda.bindings.driver")
CUresult = drv.CUresult
OOM = CUresult.CUDA_ERROR_OUT_OF_MEMORY


def _driver(error_string=None, cu_init=None):
    """A stand-in for ``cuda.bindings.driver``: the real CUresult, a chosen cuGetErrorString."""

    def cuGetErrorString(err):
        if error_string is None:
            raise RuntimeError("no NVIDIA driver")  # what cuda-bindings does without libcuda
        return (CUresult.CUDA_SUCCESS, error_string.encode())

    return types.SimpleNamespace(CUresult=CUresult, cuGetErrorString=cuGetErrorString, cuInit=cu_init)


@pytest.fixture
def no_libcuda(monkeypatch):
    monkeypatch.setattr(cuda, "driver", lambda: _driver())


def test_success_unwraps_to_none_one_value_or_a_tuple(no_libcuda):
    ok = CUresult.CUDA_SUCCESS
    assert cuda.check((ok,), "cuCtxSynchronize") is None
    assert cuda.check(ok, "cuCtxSynchronize") is None  # a bare CUresult, not a tuple
    assert cuda.check((ok, 7), "cuDeviceGetCount") == 7
    assert cuda.check((ok, 3, 4), "cuMemGetInfo") == (3, 4)


def test_a_failure_names_the_call_the_code_the_symbol_and_the_table_entry(no_libcuda):
    with pytest.raises(HardwareError) as info:
        cuda.check((OOM, None), "cuMemAlloc")
    exc = info.value
    assert (exc.call, exc.code, exc.name) == ("cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY")
    assert exc.explanation == cuda.CU_RESULT_EXPLANATIONS["CUDA_ERROR_OUT_OF_MEMORY"]
    assert str(exc).startswith("cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY [2] (")
    assert "nvidia-smi" in str(exc)


def test_the_driver_text_comes_first_where_the_driver_can_give_it(monkeypatch):
    monkeypatch.setattr(cuda, "driver", lambda: _driver("out of memory"))
    with pytest.raises(HardwareError) as info:
        cuda.check((OOM,), "cuMemAlloc")
    table = cuda.CU_RESULT_EXPLANATIONS["CUDA_ERROR_OUT_OF_MEMORY"]
    assert info.value.explanation == f"out of memory; {table}"


def test_a_code_outside_the_table_keeps_the_driver_text_or_nothing(monkeypatch):
    code = CUresult.CUDA_ERROR_STUB_LIBRARY
    assert code.name not in cuda.CU_RESULT_EXPLANATIONS
    monkeypatch.setattr(cuda, "driver", lambda: _driver("stub library"))
    with pytest.raises(HardwareError, match=r"\(stub library\)$"):
        cuda.check((code,), "cuInit")
    monkeypatch.setattr(cuda, "driver", lambda: _driver())
    with pytest.raises(HardwareError) as info:
        cuda.check((code,), "cuInit")
    assert info.value.explanation == "" and str(info.value).endswith(f"[{int(code)}]")


def test_call_takes_the_function_and_names_the_error_after_it(no_libcuda):
    seen = []

    def cuDeviceCanAccessPeer(a, b):  # stands in for the binding of the same name
        seen.append((a, b))
        return (CUresult.CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, 0)

    with pytest.raises(HardwareError) as info:
        cuda.call(cuDeviceCanAccessPeer, "dev0", "dev1")
    assert seen == [("dev0", "dev1")]  # arguments passed through in order
    assert (info.value.call, info.value.name) == (
        "cuDeviceCanAccessPeer",
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
    )
    assert "no P2P path" in info.value.explanation

    def cuMemGetInfo():
        return (CUresult.CUDA_SUCCESS, 10, 20)

    assert cuda.call(cuMemGetInfo) == (10, 20)


def test_call_refuses_a_function_name():
    with pytest.raises(TypeError):
        cuda.call("cuDeviceGetCount")  # type: ignore[arg-type]


def test_the_explanation_table_uses_real_cuda_result_names_and_covers_the_common_codes():
    members = {m.name for m in CUresult}
    assert set(cuda.CU_RESULT_EXPLANATIONS) <= members
    common = {
        "CUDA_ERROR_OUT_OF_MEMORY",
        "CUDA_ERROR_NOT_PERMITTED",
        "CUDA_ERROR_NOT_SUPPORTED",
        "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED",
        "CUDA_ERROR_INVALID_DEVICE",
        "CUDA_ERROR_NO_DEVICE",
        "CUDA_ERROR_NOT_INITIALIZED",
        "CUDA_ERROR_LAUNCH_FAILED",
        "CUDA_ERROR_ILLEGAL_ADDRESS",
        "CUDA_ERROR_INVALID_VALUE",
    }
    assert common <= set(cuda.CU_RESULT_EXPLANATIONS)
    assert all(
        text and text == text.strip() and not text.endswith(".")
        for text in cuda.CU_RESULT_EXPLANATIONS.values()
    )


def test_explain_joins_the_detail_and_the_table_entry():
    table = cuda.CU_RESULT_EXPLANATIONS["CUDA_ERROR_INVALID_VALUE"]
    assert cuda.explain("CUDA_ERROR_INVALID_VALUE") == table
    assert cuda.explain("CUDA_ERROR_INVALID_VALUE", "copy 3 failed") == f"copy 3 failed; {table}"
    assert cuda.explain("CUDA_ERROR_NOT_A_CODE", "detail") == "detail"
    assert cuda.explain("CUDA_ERROR_NOT_A_CODE") == ""


@pytest.fixture
def fresh_init(monkeypatch):
    """init() caches its outcome in module globals; each test starts from an uninitialised driver."""
    monkeypatch.setattr(cuda, "_initialised", False)
    monkeypatch.setattr(cuda, "_init_error", None)


def test_a_failing_cuinit_is_not_supported_with_the_explanation_and_is_remembered(monkeypatch, fresh_init):
    calls = []

    def cuInit(flags):
        calls.append(flags)
        return (CUresult.CUDA_ERROR_NO_DEVICE,)

    monkeypatch.setattr(cuda, "driver", lambda: _driver(cu_init=cuInit))
    with pytest.raises(
        NotSupported, match=r"^cuInit failed: CUDA_ERROR_NO_DEVICE \(.*CUDA_VISIBLE_DEVICES\)$"
    ):
        cuda.init()
    with pytest.raises(NotSupported):
        cuda.init()
    assert calls == [0]  # the second init() answers from the remembered error


def test_no_libcuda_is_not_supported(monkeypatch, fresh_init):
    def cuInit(flags):
        raise RuntimeError('"cuda" is an NVIDIA driver library and can only be found via system search')

    monkeypatch.setattr(cuda, "driver", lambda: _driver(cu_init=cuInit))
    with pytest.raises(NotSupported, match="^no NVIDIA driver: "):
        cuda.device_count()
