"""The ``spark`` executor service (``veil verify --executor spark --master URL``): a release in parts
counted, and a method's work mapped, on Apache Spark (:class:`veil.plugins._spark.tables.SparkExecutor`).
Registering it imports no pyspark; the session starts when the service is first used."""

from __future__ import annotations

from veil.engine import hookimpl


@hookimpl
def veil_register_executors():
    from .._spark.tables import SparkExecutor

    return [SparkExecutor]
