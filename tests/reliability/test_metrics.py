"""/metrics of a real two-worker ``adnet serve``: every scrape, whichever worker answers it, counts the requests
both workers answered, and figures a previous run left in the data directory are gone at start."""

from __future__ import annotations

import httpx

from tests.reliability.conftest import running_server, scaled

N = scaled(ci=40, full=200)
TOKEN = "metrics-token-" + "m" * 32


def served(scrape: str) -> float:
    """The requests to /api/serve a scrape counts, whatever their status."""
    return sum(float(line.rsplit(" ", 1)[1]) for line in scrape.splitlines()
               if line.startswith("adnet_http_requests_total{") and 'route="/api/serve"' in line)


def test_a_scrape_adds_up_every_worker(tmp_path):
    left_over = tmp_path / "metrics" / "counter_1.db"
    left_over.parent.mkdir()
    left_over.write_bytes(b"a previous run's counts")
    with running_server(tmp_path, "metrics", extra_env={"ADNET_METRICS_TOKEN": TOKEN}) as server:
        for _ in range(N):  # a connection each, so the kernel spreads them over the workers
            httpx.get(f"{server.url}/api/serve", params={"siteId": server.site_id}, timeout=10)
        scrapes = [httpx.get(f"{server.url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=10)
                   for _ in range(6)]
        writers = {path.name for path in (tmp_path / "metrics").iterdir()}
        workers = server.worker_pids()

    assert not left_over.exists()
    assert {f"counter_{pid}.db" for pid in workers} <= writers  # both workers answered requests
    assert [scrape.status_code for scrape in scrapes] == [200] * 6
    assert [served(scrape.text) for scrape in scrapes] == [N] * 6
