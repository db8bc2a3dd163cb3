"""What the two web surfaces share: the JSON API (``api/``) and the portal (``portal/``) are siblings over the domain
and never import each other; both stand on this package for the running service and the request's client
(``context``), the signed-in session (``sessions``), the status of a domain refusal (``errors``), rate limits
(``limits``), CSV answers (``csv``) and idempotency keys (``idempotency``). It knows neither surface."""
