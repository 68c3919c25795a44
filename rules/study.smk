# The whole study: the collected summary of every valid case.


rule collect_results:
    input:
        errors=expand("results/{case}/errors.parquet", case=CASES),
        code=stage_sources("collect"),
    output:
        parquet="results/summary.parquet",
        csv=report(
            "results/summary.csv",
            category="Study",
            labels={"table": "summary"},
        ),
    log:
        "logs/collect_results.log",
    resources:
        mem_mb=1000,
    conda:
        "../environment.yml"
    shell:
        "python -m harness collect {input.errors} --out {output.parquet} > {log} 2>&1"
