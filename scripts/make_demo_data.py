"""Write Veil's bundled demo table: 5,000 synthetic hospital admissions and their schema.

    python scripts/make_demo_data.py [--out DIR]      # default: resources/

Writes ``demo_hospital.csv`` (UTF-8, comma separated, header, LF line endings) and
``demo_hospital.json`` (kinds, roles and descriptions of the columns). Nobody in the table exists:
every value is drawn here from one seeded ``numpy.random.Generator`` in a fixed order, so the same
numpy gives the same bytes on every machine (tests/engine/test_demo_data.py checks it).

How the table is built, so that it teaches what a real one would:

* Direct identifiers (``patient_name``, ``mrn``) are unique, as in a real extract.
* The quasi-identifiers age, sex and postcode district single out most patients, yet postcode
  *area* (the letters of the district) and age bands give large classes: k-anonymity has a
  problem to solve and a generalisation that solves it.
* 32 comorbidity and medication flags come from a small chain of logistic models in which age,
  sex, smoking and obesity raise the risk of disease and a disease raises the odds of its drugs
  (diabetes -> metformin, insulin; hypertension -> ACE inhibitor, statin; COPD, asthma -> inhaler).
* ``diagnosis_group`` (the sensitive attribute) follows the flags; ``readmitted_30d`` (the target)
  follows a logistic model of age, the flags and the length of stay, so a classifier on the flags
  reaches a ROC AUC near 0.75: utility worth preserving, far from trivial.
"""

from __future__ import annotations

import argparse
import csv
import json
from pathlib import Path

import numpy as np

SEED = 20240917
N_PATIENTS = 5_000
YEAR = 2024
REPO = Path(__file__).resolve().parent.parent

FIRST_NAMES_F = (
    "Amelia",
    "Olivia",
    "Isla",
    "Emily",
    "Ava",
    "Jessica",
    "Sophie",
    "Grace",
    "Lily",
    "Ruby",
    "Chloe",
    "Evie",
    "Ella",
    "Hannah",
    "Lucy",
    "Megan",
    "Charlotte",
    "Holly",
    "Laura",
    "Sarah",
    "Rebecca",
    "Katie",
    "Amy",
    "Rachel",
    "Emma",
    "Claire",
    "Helen",
    "Susan",
    "Margaret",
    "Patricia",
    "Linda",
    "Barbara",
    "Elizabeth",
    "Jennifer",
    "Karen",
    "Julie",
    "Joanne",
    "Nicola",
    "Alison",
    "Denise",
    "Aisha",
    "Priya",
    "Fatima",
    "Zainab",
    "Mei",
    "Anna",
    "Maria",
    "Irene",
    "Joan",
    "Doris",
)
FIRST_NAMES_M = (
    "Oliver",
    "Jack",
    "Harry",
    "George",
    "Noah",
    "Charlie",
    "Jacob",
    "Thomas",
    "Oscar",
    "William",
    "James",
    "Daniel",
    "Joshua",
    "Samuel",
    "Benjamin",
    "Luke",
    "Matthew",
    "Ryan",
    "Adam",
    "Liam",
    "David",
    "John",
    "Michael",
    "Paul",
    "Mark",
    "Andrew",
    "Stephen",
    "Richard",
    "Peter",
    "Robert",
    "Christopher",
    "Gary",
    "Kevin",
    "Ian",
    "Simon",
    "Neil",
    "Graham",
    "Keith",
    "Brian",
    "Kenneth",
    "Mohammed",
    "Ali",
    "Imran",
    "Arjun",
    "Wei",
    "Tomasz",
    "Piotr",
    "Colin",
    "Derek",
    "Arthur",
)
LAST_NAMES = (
    "Smith",
    "Jones",
    "Taylor",
    "Brown",
    "Williams",
    "Wilson",
    "Johnson",
    "Davies",
    "Robinson",
    "Wright",
    "Thompson",
    "Evans",
    "Walker",
    "White",
    "Roberts",
    "Green",
    "Hall",
    "Wood",
    "Jackson",
    "Clarke",
    "Patel",
    "Khan",
    "Lewis",
    "Harris",
    "Martin",
    "Cooper",
    "King",
    "Lee",
    "Baker",
    "Hill",
    "Ward",
    "Turner",
    "Moore",
    "Parker",
    "Harrison",
    "Morgan",
    "Carter",
    "Phillips",
    "Mitchell",
    "Bennett",
    "Shaw",
    "Cook",
    "Richardson",
    "Bailey",
    "Collins",
    "Marshall",
    "Hughes",
    "Edwards",
    "Hussain",
    "Ali",
    "Begum",
    "Young",
    "Allen",
    "Mason",
    "Holmes",
    "Barker",
    "Atkinson",
    "Dixon",
    "Chapman",
    "Ellis",
    "Kaur",
    "Singh",
    "Ahmed",
    "Murray",
    "Reid",
    "Fletcher",
    "Lawson",
    "Pearson",
    "Webb",
    "Hudson",
    "Kowalski",
    "Nowak",
    "Chen",
    "Wong",
    "Okafor",
    "Mensah",
    "Campbell",
    "Stewart",
    "Kelly",
    "Price",
)
MIDDLE_INITIALS = "ABCDEFGHJKLMNPRSTW"

# Postcode areas served by the (imaginary) hospital: code, share of admissions, number of districts.
POSTCODE_AREAS = (
    ("LS", 0.150, 28),
    ("BD", 0.110, 22),
    ("WF", 0.080, 17),
    ("HD", 0.065, 9),
    ("HX", 0.055, 7),
    ("YO", 0.055, 26),
    ("HG", 0.035, 5),
    ("S", 0.060, 40),
    ("DN", 0.045, 22),
    ("HU", 0.040, 20),
    ("M", 0.040, 40),
    ("OL", 0.030, 16),
    ("BB", 0.025, 12),
    ("BL", 0.020, 9),
    ("PR", 0.020, 9),
    ("LA", 0.018, 12),
    ("DL", 0.018, 17),
    ("TS", 0.022, 29),
    ("NE", 0.025, 40),
    ("SR", 0.014, 8),
    ("DH", 0.015, 9),
    ("CA", 0.013, 28),
    ("WN", 0.015, 8),
    ("DE", 0.012, 24),
    ("LN", 0.012, 13),
)
# Admissions per month: a winter peak.
MONTH_WEIGHTS = (1.20, 1.10, 1.00, 0.95, 0.90, 0.85, 0.85, 0.85, 0.90, 1.00, 1.10, 1.30)
WINTER = (1, 2, 12)

# The flags, drawn in this order: (name, description, intercept, {term: log-odds}). A term is
# "age" (years above 60, per 15 years), "male", "female", "winter" or an earlier flag.
FLAGS = (
    ("smoker", "is a current smoker", -1.45, {"age": -0.35, "male": 0.25}),
    ("obesity", "has a body-mass index of 30 or more", -1.35, {"age": -0.05}),
    ("alcohol_misuse", "has recorded harmful drinking", -3.30, {"male": 0.70, "smoker": 0.90, "age": -0.20}),
    ("hypertension", "has high blood pressure", -0.80, {"age": 0.90, "obesity": 0.70}),
    ("diabetes", "has type 1 or type 2 diabetes", -2.15, {"age": 0.45, "obesity": 1.20, "hypertension": 0.35}),
    ("high_cholesterol", "has hyperlipidaemia", -1.55, {"age": 0.45, "diabetes": 0.50, "obesity": 0.40}),
    (
        "coronary_heart_disease",
        "has angina or has had a heart attack",
        -2.90,
        {"age": 0.80, "male": 0.55, "hypertension": 0.50, "diabetes": 0.50, "smoker": 0.50, "high_cholesterol": 0.45},
    ),
    ("atrial_fibrillation", "has atrial fibrillation", -3.05, {"age": 1.10, "hypertension": 0.40}),
    (
        "heart_failure",
        "has chronic heart failure",
        -3.70,
        {"age": 0.90, "coronary_heart_disease": 1.10, "atrial_fibrillation": 0.80, "hypertension": 0.40},
    ),
    (
        "stroke_history",
        "has had a stroke or TIA",
        -3.80,
        {"age": 0.85, "atrial_fibrillation": 0.80, "hypertension": 0.50, "smoker": 0.30},
    ),
    ("copd", "has chronic obstructive pulmonary disease", -3.25, {"age": 0.75, "smoker": 1.80}),
    ("asthma", "has asthma", -2.15, {"age": -0.25, "female": 0.30}),
    (
        "chronic_kidney_disease",
        "has chronic kidney disease, stage 3 or worse",
        -3.00,
        {"age": 1.00, "diabetes": 0.75, "hypertension": 0.60, "heart_failure": 0.50},
    ),
    ("liver_disease", "has chronic liver disease", -3.90, {"alcohol_misuse": 1.90, "obesity": 0.50}),
    ("cancer_history", "has had cancer in the last five years", -2.75, {"age": 0.60, "smoker": 0.45}),
    ("depression", "has depression", -1.95, {"age": -0.15, "female": 0.45, "alcohol_misuse": 0.70}),
    ("anxiety", "has an anxiety disorder", -2.30, {"age": -0.30, "female": 0.50, "depression": 1.10}),
    ("dementia", "has dementia", -4.60, {"age": 1.70, "stroke_history": 0.70}),
    ("osteoarthritis", "has osteoarthritis", -2.05, {"age": 0.80, "obesity": 0.55, "female": 0.25}),
    ("osteoporosis", "has osteoporosis", -3.80, {"age": 1.00, "female": 1.10, "smoker": 0.30}),
    ("anaemia", "has anaemia", -2.55, {"age": 0.40, "chronic_kidney_disease": 0.70, "cancer_history": 0.60}),
    ("metformin", "takes metformin", -3.70, {"diabetes": 4.30, "chronic_kidney_disease": -0.70}),
    ("insulin", "takes insulin", -5.50, {"diabetes": 4.10, "metformin": -0.60, "chronic_kidney_disease": 0.60}),
    (
        "ace_inhibitor",
        "takes an ACE inhibitor",
        -3.20,
        {"hypertension": 2.60, "heart_failure": 0.90, "diabetes": 0.50, "chronic_kidney_disease": 0.30},
    ),
    (
        "beta_blocker",
        "takes a beta blocker",
        -3.20,
        {"hypertension": 1.10, "coronary_heart_disease": 1.50, "atrial_fibrillation": 1.30, "heart_failure": 1.00},
    ),
    (
        "statin",
        "takes a statin",
        -3.00,
        {
            "age": 0.70,
            "hypertension": 1.00,
            "diabetes": 1.20,
            "high_cholesterol": 2.20,
            "coronary_heart_disease": 1.20,
            "stroke_history": 0.90,
        },
    ),
    ("anticoagulant", "takes an anticoagulant", -4.20, {"atrial_fibrillation": 3.80, "stroke_history": 0.70}),
    ("inhaler", "uses an inhaler", -4.20, {"copd": 5.00, "asthma": 4.90}),
    ("antidepressant", "takes an antidepressant", -3.60, {"depression": 3.10, "anxiety": 1.30}),
    ("opioid", "takes an opioid painkiller", -2.90, {"age": 0.25, "osteoarthritis": 0.80, "cancer_history": 0.90}),
    (
        "diuretic",
        "takes a diuretic",
        -3.70,
        {"age": 0.50, "heart_failure": 2.60, "hypertension": 0.90, "chronic_kidney_disease": 0.40},
    ),
    (
        "proton_pump_inhibitor",
        "takes a proton pump inhibitor",
        -1.95,
        {"age": 0.35, "anticoagulant": 0.50, "opioid": 0.35, "liver_disease": 0.50},
    ),
)

# Main reason for admission: (group, base score, {term: weight}); one is drawn per patient with
# probability proportional to exp(score) (a multinomial logit, sampled by the Gumbel-max trick).
DIAGNOSIS_GROUPS = (
    (
        "cardiovascular",
        0.20,
        {
            "age": 0.40,
            "coronary_heart_disease": 1.00,
            "heart_failure": 1.00,
            "atrial_fibrillation": 0.70,
            "hypertension": 0.30,
        },
    ),
    ("respiratory", -0.05, {"age": 0.20, "copd": 1.70, "asthma": 0.90, "smoker": 0.30, "winter": 0.50}),
    ("oncology", -0.90, {"cancer_history": 2.40}),
    ("mental health", -0.75, {"age": -0.50, "depression": 1.20, "anxiety": 0.80, "alcohol_misuse": 0.90}),
    ("infectious", 0.05, {"age": 0.30, "diabetes": 0.30, "copd": 0.40, "dementia": 0.60, "winter": 0.40}),
    ("gastrointestinal", 0.25, {"liver_disease": 1.70, "alcohol_misuse": 0.50, "proton_pump_inhibitor": 0.30}),
    ("musculoskeletal", -0.30, {"osteoarthritis": 0.80, "osteoporosis": 0.80}),
    ("neurological", -0.65, {"stroke_history": 1.50, "dementia": 1.20}),
    ("renal", -1.10, {"chronic_kidney_disease": 1.50, "diabetes": 0.30}),
    ("endocrine", -1.30, {"diabetes": 1.20, "insulin": 0.70}),
    ("injury", 0.10, {"age": -0.15, "osteoporosis": 0.70, "dementia": 0.50, "alcohol_misuse": 0.60}),
)
# Extra log-days of stay by diagnosis group (same order as DIAGNOSIS_GROUPS).
STAY_BY_GROUP = (0.25, 0.20, 0.45, 0.60, 0.10, 0.00, 0.15, 0.45, 0.15, -0.10, 0.05)

READMISSION = (
    -2.75,
    {
        "age": 0.40,
        "heart_failure": 0.85,
        "copd": 0.70,
        "chronic_kidney_disease": 0.55,
        "diabetes": 0.30,
        "insulin": 0.40,
        "cancer_history": 0.70,
        "dementia": 0.50,
        "alcohol_misuse": 0.70,
        "liver_disease": 0.50,
        "anaemia": 0.30,
        "depression": 0.20,
        "log_stay": 0.25,
    },
)

MARITAL = ("single", "married", "divorced", "widowed")


def logistic(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def linear_score(intercept: float, terms: dict, columns: dict) -> np.ndarray:
    """``intercept + sum(weight * column)`` over the named terms, summed in their listed order."""
    score = np.full(N_PATIENTS, intercept)
    for name, weight in terms.items():
        score = score + weight * columns[name]
    return score


def draw_names(rng: np.random.Generator, is_male: np.ndarray) -> list[str]:
    """Unique "First M. Last" names; a name already taken is drawn again (in row order)."""
    names: list[str] = []
    taken: set[str] = set()
    for male in is_male:
        while True:
            firsts = FIRST_NAMES_M if male else FIRST_NAMES_F
            name = (
                f"{firsts[rng.integers(len(firsts))]} "
                f"{MIDDLE_INITIALS[rng.integers(len(MIDDLE_INITIALS))]}. "
                f"{LAST_NAMES[rng.integers(len(LAST_NAMES))]}"
            )
            if name not in taken:
                break
        taken.add(name)
        names.append(name)
    return names


def draw_mrns(rng: np.random.Generator) -> list[str]:
    numbers = rng.choice(10_000_000, size=N_PATIENTS, replace=False)
    return [f"MRN-{int(x):07d}" for x in numbers]


def draw_ages(rng: np.random.Generator) -> np.ndarray:
    """Adult admissions lean old: a beta shape over 18-95 with its mode in the early seventies."""
    return np.clip(np.rint(18 + 77 * rng.beta(1.8, 1.35, N_PATIENTS)), 18, 95).astype(np.int64)


def draw_districts(rng: np.random.Generator) -> list[str]:
    """Postcode districts ("LS6"): areas by their share, districts within an area unevenly."""
    shares = np.array([share for _, share, _ in POSTCODE_AREAS])
    area_of = rng.choice(len(POSTCODE_AREAS), size=N_PATIENTS, p=shares / shares.sum())
    district_of = np.zeros(N_PATIENTS, dtype=np.int64)
    for a, (_, _, n_districts) in enumerate(POSTCODE_AREAS):
        here = area_of == a
        popularity = rng.dirichlet(np.full(n_districts, 1.5))
        district_of[here] = rng.choice(n_districts, size=int(here.sum()), p=popularity)
    return [f"{POSTCODE_AREAS[a][0]}{d + 1}" for a, d in zip(area_of, district_of)]


def draw_marital(rng: np.random.Generator, age: np.ndarray) -> list[str]:
    """Marital status by age: single when young, widowed when old."""
    a = (age - 18) / 77.0
    weights = np.column_stack(
        [np.exp(1.5 - 4.0 * a), np.full(N_PATIENTS, 1.3), 0.15 + 0.5 * a * (1.2 - a), np.exp(-4.5 + 6.0 * a)]
    )
    pick = np.argmax(np.log(weights) + rng.gumbel(size=weights.shape), axis=1)
    return [MARITAL[i] for i in pick]


def draw_flags(rng: np.random.Generator, columns: dict) -> None:
    """Add each flag of FLAGS to ``columns`` (0/1 int arrays), in order."""
    for name, _, intercept, terms in FLAGS:
        p = logistic(linear_score(intercept, terms, columns))
        columns[name] = (rng.random(N_PATIENTS) < p).astype(np.int64)


def draw_diagnosis(rng: np.random.Generator, columns: dict) -> np.ndarray:
    scores = np.column_stack([linear_score(base, terms, columns) for _, base, terms in DIAGNOSIS_GROUPS])
    return np.argmax(scores + rng.gumbel(size=scores.shape), axis=1)


def draw_stay(rng: np.random.Generator, columns: dict, group: np.ndarray) -> np.ndarray:
    """Days in hospital: gamma-Poisson (overdispersed) around a mean set by age, frailty and group."""
    log_mean = (
        1.05
        + 0.25 * columns["age"]
        + 0.35 * columns["heart_failure"]
        + 0.45 * columns["dementia"]
        + 0.20 * columns["chronic_kidney_disease"]
        + np.asarray(STAY_BY_GROUP)[group]
    )
    mean = np.exp(log_mean)
    return np.minimum(rng.poisson(rng.gamma(1.6, mean / 1.6)), 120).astype(np.int64)


def build_table(seed: int = SEED) -> tuple[list[str], list[list]]:
    """The demo table as a header and rows of plain Python values."""
    rng = np.random.default_rng(seed)
    age = draw_ages(rng)
    is_male = rng.random(N_PATIENTS) < 0.48
    names = draw_names(rng, is_male)
    mrns = draw_mrns(rng)
    districts = draw_districts(rng)
    marital = draw_marital(rng, age)
    month = rng.choice(12, size=N_PATIENTS, p=np.asarray(MONTH_WEIGHTS) / sum(MONTH_WEIGHTS)) + 1
    columns = {
        "age": (age - 60) / 15.0,
        "male": is_male * 1.0,
        "female": 1.0 - is_male,
        "winter": np.isin(month, WINTER) * 1.0,
    }
    draw_flags(rng, columns)
    group = draw_diagnosis(rng, columns)
    stay = draw_stay(rng, columns, group)
    columns["log_stay"] = np.log1p(stay)
    readmitted = (rng.random(N_PATIENTS) < logistic(linear_score(*READMISSION, columns))).astype(np.int64)

    flag_names = [f[0] for f in FLAGS]
    header = [
        "patient_name",
        "mrn",
        "age",
        "sex",
        "postcode_district",
        "marital_status",
        "admission_month",
        *flag_names,
        "diagnosis_group",
        "length_of_stay",
        "readmitted_30d",
    ]
    rows = []
    for i in range(N_PATIENTS):
        rows.append(
            [
                names[i],
                mrns[i],
                int(age[i]),
                "M" if is_male[i] else "F",
                districts[i],
                marital[i],
                f"{YEAR}-{int(month[i]):02d}",
                *(int(columns[f][i]) for f in flag_names),
                DIAGNOSIS_GROUPS[group[i]][0],
                int(stay[i]),
                int(readmitted[i]),
            ]
        )
    return header, rows


def schema(header: list[str]) -> dict:
    """The JSON schema of the demo table, columns in CSV order."""
    fixed = {
        "patient_name": ("categorical", "identifier", "full name (invented)"),
        "mrn": ("categorical", "identifier", "medical record number, unique per patient"),
        "age": ("numeric", "quasi-identifier", "age in whole years at admission, 18 to 95"),
        "sex": ("categorical", "quasi-identifier", "F or M"),
        "postcode_district": (
            "categorical",
            "quasi-identifier",
            "outward code of the home postcode, e.g. LS6; its letters are the postcode "
            "area, the natural first step of generalisation",
        ),
        "marital_status": ("categorical", "quasi-identifier", "single, married, divorced or widowed"),
        "admission_month": ("categorical", "quasi-identifier", f"month of admission, {YEAR}-01 to {YEAR}-12"),
        "diagnosis_group": (
            "categorical",
            "sensitive",
            "main reason for admission, one of: " + ", ".join(g[0] for g in DIAGNOSIS_GROUPS),
        ),
        "length_of_stay": ("numeric", "insensitive", "days in hospital (0 for a day case)"),
        "readmitted_30d": ("binary", "target", "1 if readmitted as an emergency within 30 days of discharge"),
    }
    for name, text, _, _ in FLAGS:
        fixed[name] = ("binary", "insensitive", f"1 if the patient {text} (as recorded at admission)")
    columns = [{"name": n, "kind": fixed[n][0], "role": fixed[n][1], "description": fixed[n][2]} for n in header]
    return {
        "name": "Demo hospital admissions",
        "description": (
            f"{N_PATIENTS:,} synthetic adult admissions to an imaginary hospital in {YEAR}: "
            "names and record numbers, age, sex, home postcode district, comorbidity and "
            "medication flags, the diagnosis group and whether the patient came back within "
            "30 days. No real person is in it. Most patients are unique on age, sex and "
            "postcode district, so the table cannot be shared as it is."
        ),
        "source": "synthetic, made by scripts/make_demo_data.py",
        "columns": columns,
        "suggested": {"model": "k-anonymity", "k": 5},
    }


def write(out: Path, header: list[str], rows: list[list]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "demo_hospital.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    text = json.dumps(schema(header), indent=2, ensure_ascii=False) + "\n"
    (out / "demo_hospital.json").write_text(text, encoding="utf-8", newline="\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "resources", help="folder to write into")
    args = parser.parse_args(argv)
    header, rows = build_table()
    write(args.out, header, rows)
    print(f"wrote {len(rows):,} rows to {args.out / 'demo_hospital.csv'} and its schema")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
