"""The papers Veil's built-in methods come from, cited as people cite them: authors, title, year.

A plugin's ``paper`` is a key of :data:`PAPERS` (the name of the paper's text in the project's
research folder) or, for a third-party plugin, the citation itself; :func:`cite` turns either into
the words a user reads, never a file name or a hash.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Citation:
    authors: tuple[str, ...]
    title: str
    year: int
    venue: str = ""

    def short(self) -> str:
        """``Zhang et al. (2017)``: what a list or a tooltip has room for."""
        lead = self.authors[0].split()[-1] if self.authors else "Anonymous"
        others = (
            " et al."
            if len(self.authors) > 2
            else f" and {self.authors[1].split()[-1]}"
            if len(self.authors) == 2
            else ""
        )
        return f"{lead}{others} ({self.year})"

    def full(self) -> str:
        """Authors, “title”, venue, year."""
        names = ", ".join(self.authors) if self.authors else "authors not named in Veil's copy"
        venue = f", {self.venue}" if self.venue else ""
        return f"{names}: “{self.title}”{venue}, {self.year}"


PAPERS = {
    "000_0106b4def2026c16": Citation(
        ("Baichuan Zhang", "Noman Mohammed", "Vachik S. Dave", "Mohammad Al Hasan"),
        "Feature Selection for Classification under Anonymity Constraint",
        2017,
        "Transactions on Data Privacy",
    ),
    "001_f1ec36403a5884c8": Citation(
        ("Tiancheng Li", "Ninghui Li"), "On the Tradeoff Between Privacy and Utility in Data Publishing", 2009, "KDD"
    ),
    "002_aa8a8f08b56f3f6d": Citation(
        (), "PatternKa: Scalable Privacy Algorithm for Sparse High Dimensional Data", 2020
    ),
    "003_5ee0bd0faa8a52c8": Citation(("Jun Yang", "Yun Li"), "Differentially Private Feature Selection", 2014, "IJCNN"),
    "004_b4cef08cb2ecc722": Citation(
        ("Yasser Jafer", "Stan Matwin", "Marina Sokolova"),
        "A Multi-dimensional Privacy-aware Evaluation Function in Automatic Feature Selection",
        2017,
        "Transactions on Data Privacy",
    ),
    # global recoding and its information-loss metrics
    "flash": Citation(
        ("Florian Kohlmayer", "Fabian Prasser", "Claudia Eckert", "Alfons Kemper", "Klaus A. Kuhn"),
        "Flash: Efficient, Stable and Optimal K-Anonymity",
        2012,
        "PASSAT/SocialCom",
    ),
    "safepub": Citation(
        ("Raffael Bild", "Klaus A. Kuhn", "Fabian Prasser"),
        "SafePub: A Truthful Data Anonymization Algorithm With Strong Privacy Guarantees",
        2018,
        "PoPETs",
    ),
    "iyengar": Citation(("Vijay S. Iyengar",), "Transforming Data to Satisfy Privacy Constraints", 2002, "KDD"),
    "gionis-tassa": Citation(
        ("Aristides Gionis", "Tamir Tassa"),
        "k-Anonymization with Minimal Loss of Information",
        2009,
        "IEEE Transactions on Knowledge and Data Engineering",
    ),
    "sweeney": Citation(
        ("Latanya Sweeney",),
        "Achieving k-Anonymity Privacy Protection Using Generalization and Suppression",
        2002,
        "International Journal of Uncertainty, Fuzziness and Knowledge-Based Systems",
    ),
    "arx": Citation(
        ("Fabian Prasser", "Florian Kohlmayer", "Ronald Lautenschläger", "Klaus A. Kuhn"),
        "ARX – A Comprehensive Tool for Anonymizing Biomedical Data",
        2014,
        "AMIA Annual Symposium",
    ),
    # presence, map and risk models (docs/reference.md#presence-map-and-risk-models)
    "cao-karras": Citation(
        ("Jianneng Cao", "Panagiotis Karras"), "Publishing Microdata with a Robust Privacy Guarantee", 2012, "PVLDB"
    ),
    "nergiz-presence": Citation(
        ("Mehmet Ercan Nergiz", "Maurizio Atzori", "Chris Clifton"),
        "Hiding the Presence of Individuals from Shared Databases",
        2007,
        "SIGMOD",
    ),
    "el-emam-dankar": Citation(
        ("Khaled El Emam", "Fida Kamal Dankar"),
        "Protecting Privacy Using k-Anonymity",
        2008,
        "Journal of the American Medical Informatics Association",
    ),
    "dankar-uniqueness": Citation(
        ("Fida Kamal Dankar", "Khaled El Emam", "Angelica Neisa", "Tyson Roffey"),
        "Estimating the Re-identification Risk of Clinical Data Sets",
        2012,
        "BMC Medical Informatics and Decision Making",
    ),
    # cell-level methods (docs/reference.md#protecting-cells)
    "mdav": Citation(
        ("Josep Domingo-Ferrer", "Vicenç Torra"),
        "Ordinal, Continuous and Heterogeneous k-Anonymity Through Microaggregation",
        2005,
        "Data Mining and Knowledge Discovery",
    ),
    "sdcmicro": Citation(
        ("Matthias Templ", "Alexander Kowarik", "Bernhard Meindl"),
        "Statistical Disclosure Control for Micro-Data Using the R Package sdcMicro",
        2015,
        "Journal of Statistical Software",
    ),
    # perturbation (docs/perturbation.md)
    "gouweleeuw-pram": Citation(
        ("J. M. Gouweleeuw", "P. Kooiman", "L. C. R. J. Willenborg", "P.-P. de Wolf"),
        "Post Randomisation for Statistical Disclosure Control: Theory and Implementation",
        1998,
        "Journal of Official Statistics",
    ),
    "brand-noise": Citation(
        ("Ruth Brand",),
        "Microdata Protection through Noise Addition",
        2002,
        "Inference Control in Statistical Databases",
    ),
    "moore-rank-swap": Citation(
        ("Richard A. Moore",),
        "Controlled Data-Swapping Techniques for Masking Public Use Microdata Sets",
        1996,
        "U.S. Bureau of the Census, Statistical Research Division Report rr96/04",
    ),
    "mateo-sanz-il": Citation(
        ("Josep M. Mateo-Sanz", "Francesc Sebé", "Josep Domingo-Ferrer"),
        "Outlier Protection in Continuous Microdata Masking",
        2004,
        "Privacy in Statistical Databases",
    ),
    # risk on sample microdata (survey weights, households, SUDA)
    "benedetti-franconi-1998": Citation(
        ("Roberto Benedetti", "Luisa Franconi"),
        "Statistical and Technological Solutions for Controlled Data Dissemination",
        1998,
        "Pre-proceedings of New Techniques and Technologies for Statistics",
    ),
    "franconi-polettini-2004": Citation(
        ("Luisa Franconi", "Silvia Polettini"),
        "Individual Risk Estimation in μ-Argus: A Review",
        2004,
        "Privacy in Statistical Databases",
    ),
    "elliot-manning-ford-2002": Citation(
        ("Mark J. Elliot", "Anna M. Manning", "Rupert W. Ford"),
        "A Computational Algorithm for Handling the Special Uniques Problem",
        2002,
        "International Journal of Uncertainty, Fuzziness and Knowledge-Based Systems",
    ),
    "manning-haglin-keane-2008": Citation(
        ("Anna M. Manning", "David J. Haglin", "John A. Keane"),
        "A Recursive Search Algorithm for Statistical Disclosure Assessment",
        2008,
        "Data Mining and Knowledge Discovery",
    ),
}


def cite(paper: str | None, full: bool = False) -> str:
    """How to name ``paper`` to a user ("" for none)."""
    if not paper:
        return ""
    citation = PAPERS.get(paper)
    if citation is None:
        return str(paper)  # a third-party plugin's own citation
    return citation.full() if full else f"{citation.short()}, “{citation.title}”"
