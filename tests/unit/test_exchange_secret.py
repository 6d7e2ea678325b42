"""Two-machine mr-bench with a shared secret ("add a shared-secret option"): both ends in
this process over 127.0.0.1 with the soft provider, and every way the handshake must refuse."""

import pytest

from gdrdiag.bench import exchange, mr
from gdrdiag.model.results import Status
from gdrdiag.model.vocabulary import Provider

from .test_mr_pipeline import _serve_in_thread, soft

SECRET = b"0123456789abcdef-shared"
OTHER = b"fedcba9876543210-other"


def _serve(lst, secret, out):
    return _serve_in_thread(soft(timeout_s=5.0), lst, out, secret=secret)


def test_the_same_secret_on_both_sides_runs_and_verifies():
    out = {}
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _serve(lst, SECRET, out)
        (c,) = mr.run_client(soft(), "127.0.0.1", port=lst.port, secret=SECRET)
        t.join(10)
    assert "server_error" not in out, out.get("server_error")
    (s,) = out["server"]
    assert c.status is Status.OK and c.verified and c.provider == Provider.SOFT
    assert s.status is Status.OK and s.metrics.verified_runs == 2


@pytest.mark.parametrize(
    "server_secret,client_secret,client_says,server_says",
    [
        (SECRET, OTHER, "does not hold the secret", None),  # the client refuses the server first
        (SECRET, None, "requires --secret-file", "sent no shared-secret proof"),
        (None, SECRET, "has no --secret-file", "asked for a shared-secret handshake"),
    ],
)
def test_a_missing_or_different_secret_is_refused_on_both_sides(
    server_secret, client_secret, client_says, server_says
):
    out = {}
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _serve(lst, server_secret, out)
        with pytest.raises(exchange.PeerError, match=client_says) as err:
            mr.run_client(soft(timeout_s=2.0), "127.0.0.1", port=lst.port, secret=client_secret)
        t.join(10)
    assert "\n" not in str(err.value)
    assert "server" not in out and isinstance(out.get("server_error"), exchange.PeerError)
    if server_says:
        assert server_says in str(out["server_error"])


def test_a_client_that_proves_the_wrong_secret_is_refused_by_the_server():
    """A client that skips checking the server and answers with another secret's MAC."""
    out = {}
    with exchange.Listener(0, "127.0.0.1") as lst:
        t = _serve(lst, SECRET, out)
        with exchange.connect("127.0.0.1", lst.port, timeout_s=2.0, io_timeout_s=2.0) as ch:
            ch.send("auth_hello", nonce="ab" * 16)
            challenge = ch.recv("challenge")
            ch.send("auth", mac=exchange._mac(OTHER, "client", challenge["nonce"], "ab" * 16))
            with pytest.raises(exchange.PeerError, match="wrong shared secret"):
                ch.recv("auth_ok")
        t.join(10)
    assert "proved a different shared secret" in str(out["server_error"])


def test_a_proof_is_bound_to_its_role_and_nonces():
    a, b = "ab" * 16, "cd" * 16
    assert exchange._mac(SECRET, "server", a, b) != exchange._mac(SECRET, "client", a, b)
    assert exchange._mac(SECRET, "server", a, b) != exchange._mac(SECRET, "server", b, a)
    assert exchange._mac(SECRET, "server", a, b) != exchange._mac(OTHER, "server", a, b)
    with pytest.raises(exchange.PeerError, match="malformed handshake"):
        exchange._nonce({"nonce": "not hex"}, "peer")
