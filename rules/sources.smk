# The data's sources (rules/data.smk): which files each download gives, and what prepare_data
# reads and tracks (the tracked part of each source entry).

def _raw_files(with_studies=True):
    """Paper source: downloaded file name -> source name, for the ID set and every OOD set
    (what prepare_data reads) and, with ``with_studies``, the sources the enabled studies ask
    for (their ``raw_sources`` hook). Embedded fashion: its IDX files that Debian's
    package does not provide here (downloaded instead)."""
    from softmax_ood.paper_data import load_paper_config, source_names

    if config["data"]["dataset"] == "fashion" and config["data"]["source"] == "embedded":
        sources = load_paper_config(config["data"]["sources"])["sources"]
        SOURCE_ENTRIES.update(sources)
        return {
            sources[n]["filename"]: n
            for n in source_names(sources, "fashion")
            if not os.path.isfile(sources[n].get("installed") or "")
        }
    if config["data"]["source"] != "paper":
        return {}
    sources = load_paper_config(config["data"]["sources"])["sources"]
    SOURCE_ENTRIES.update(sources)
    names = [*source_names(sources, config["data"]["dataset"]), *config["data"]["ood_test"]]
    if with_studies:
        names += [n for s in STUDIES.values() for n in s.raw_sources(config)]
    return {sources[n]["filename"]: n for n in names if n in sources}


from softmax_ood.paper_data import download_identity, source_names, tracked_entry  # noqa: E402

SOURCE_ENTRIES = {}  # paper source: name -> its entry of the sources file
RAW_FILES = _raw_files()
DATA_RAW_FILES = _raw_files(with_studies=False)


def data_inputs(wildcards):
    # the sources file is no input: prepare_data tracks the entries it reads (data_sources)
    inputs = {"code": code("workflow/scripts/prepare_data.py")}
    if config["data"]["source"] == "paper":
        inputs["raw"] = [f"data/raw/{f}" for f in DATA_RAW_FILES]
    elif config["data"]["dataset"] == "fashion":
        # the Debian package's files where installed, else the checked downloads
        from softmax_ood.fashion import fashion_entries, fashion_paths

        entries = fashion_entries({n: SOURCE_ENTRIES[n] for n in SOURCE_ENTRIES})
        inputs["idx"] = [str(p) for p in fashion_paths(entries, "data/raw").values()]
    return inputs


def data_sources(wildcards):
    """prepare_data's params: the tracked part of each source entry it reads (paper: the ID
    set's and the OOD sets'; embedded fashion: the four IDX files')."""
    if config["data"]["source"] == "paper":
        names = DATA_RAW_FILES.values()
    elif config["data"]["dataset"] == "fashion":
        names = source_names(SOURCE_ENTRIES, "fashion")
    else:
        return {}
    return {n: tracked_entry(SOURCE_ENTRIES[n]) for n in sorted(names)}
