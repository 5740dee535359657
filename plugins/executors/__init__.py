"""Where a method's parallel work runs: executor services beyond the engine's in-process one."""
