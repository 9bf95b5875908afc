"""The rule files shipped with the analyzer, loaded when no --rules directory is given."""
