"""The ``allfives`` command line: one module per subcommand, heavy imports only when it runs."""
