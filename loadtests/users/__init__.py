"""Locust users, one module per role: churn, position queries, bystanders, list/watch."""
