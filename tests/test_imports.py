"""The structure holds: no module of adnet, api, portal or web imports itself through others (the import-linter
contracts in pyproject.toml state the layers; this checks the whole graph, imports inside functions included)."""

import grimp


def test_no_import_cycle_anywhere():
    graph = grimp.build_graph("adnet", "api", "portal", "web", exclude_type_checking_imports=True)
    cycles = sorted({
        (module, imported) for module in graph.modules for imported in graph.find_modules_directly_imported_by(module)
        if graph.find_shortest_chain(importer=imported, imported=module)
    })
    assert len(graph.modules) > 100
    assert cycles == []
