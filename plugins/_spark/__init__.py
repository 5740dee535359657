"""Everything Veil runs on Apache Spark, for every area, in one private package: the session
(:mod:`.session`), PatternKa's mining (:mod:`.patterns`, paper 002 Algorithm 5) and global recoding's
class tables, release in parts and ``spark`` executor (:mod:`.tables`). It imports no registered
plugin module; pyspark is imported only inside functions, when the user picks Spark.
"""
