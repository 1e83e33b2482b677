"""The scheduler's own thin Kubernetes REST client (aiohttp): fast enough for 100k objects."""
