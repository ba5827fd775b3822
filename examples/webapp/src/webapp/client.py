"""The web service's HTTP client."""

import httpx


def fetch_status(url: str) -> int:
    with httpx.Client(timeout=10) as client:
        return client.get(url).status_code
