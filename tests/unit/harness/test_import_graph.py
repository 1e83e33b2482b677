"""The import graph of our packages has no cycle, imports for type annotations included.

lint-imports checks cycles between siblings only; a cycle through an annotation-only import still ties
a driver to the registry that lists it (the scenario model assembled from the registries is the usual
way back), so the whole graph is checked here.
"""

import grimp

PACKAGES = ("harness", "scheduler", "loadtests")


def test_no_import_cycle_with_type_checking_imports_included():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    cycles = []
    for importer in sorted(graph.modules):
        for imported in sorted(graph.find_modules_directly_imported_by(importer)):
            back = graph.find_shortest_chain(importer=imported, imported=importer)
            if back:
                cycles.append(" -> ".join((importer, *back)))
    assert not cycles, f"{len(cycles)} imports close a cycle, e.g. {cycles[0]}"


def test_the_check_sees_a_cycle_through_an_annotation_only_import():
    graph = grimp.build_graph(*PACKAGES, cache_dir=None)
    # models imports the drivers' registry; an annotation-only import of models from a driver closes a cycle
    graph.add_import(importer="harness.drivers.contract", imported="harness.scenarios.models")
    assert graph.find_shortest_chain(importer="harness.scenarios.models", imported="harness.drivers.contract")
