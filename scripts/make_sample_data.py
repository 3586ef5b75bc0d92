"""Regenerate the sample data that the ``cp`` storage plugin serves.

Drill ships a classpath jar of sample files so that a fresh install can run
``SELECT * FROM cp.`employee.json``` before any data is configured, and Drill's own
documentation, tutorials and tests lean on those tables. Auger bundles look-alikes
under ``src/auger/data`` for the same reason. We cannot redistribute Drill's files
byte for byte, so this script builds them: the rows that Drill's documentation prints
(the first employees, region 0, the TPC-H nation and region keys and names) are
reproduced, and the rest is generated from fixed name lists with a fixed seed.

Everything here is deterministic: the same pyarrow version produces the same bytes
on every run, which the tests check against the committed copies. No network access.

Usage::

    python scripts/make_sample_data.py [TARGET_DIR]   # default: src/auger/data
"""

from __future__ import annotations

import argparse
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

DEFAULT_TARGET = Path(__file__).resolve().parent.parent / "src" / "auger" / "data"
SEED = 20140519  # any constant works; changing it rewrites every generated row

EMPLOYEE_COUNT = 1155
EMPLOYEE_COLUMNS: tuple[str, ...] = (
    "employee_id",
    "full_name",
    "first_name",
    "last_name",
    "position_id",
    "position_title",
    "store_id",
    "department_id",
    "birth_date",
    "hire_date",
    "salary",
    "supervisor_id",
    "education_level",
    "marital_status",
    "gender",
    "management_role",
)
REGION_COLUMNS: tuple[str, ...] = (
    "region_id",
    "sales_city",
    "sales_state_province",
    "sales_district",
    "sales_region",
    "sales_country",
    "sales_district_id",
)


# --------------------------------------------------------------------------- employees


@dataclass(frozen=True)
class Position:
    """One FoodMart job: its id, title, management role, department and pay band."""

    position_id: int
    title: str
    role: str
    department_id: int
    min_salary: int
    max_salary: int


SENIOR, MIDDLE, STORE_MGMT = "Senior Management", "Middle Management", "Store Management"
# FoodMart's column is VARCHAR(20), which is why Drill's sample spells it "Staf".
FULL_TIME, TEMP = "Store Full Time Staf", "Store Temp Staff"

POSITIONS: dict[int, Position] = {
    p.position_id: p
    for p in (
        Position(1, "President", SENIOR, 1, 80000, 80000),
        Position(2, "VP Country Manager", SENIOR, 1, 30000, 40000),
        Position(3, "VP Information Systems", SENIOR, 2, 25000, 30000),
        Position(4, "VP Human Resources", SENIOR, 3, 15000, 20000),
        Position(5, "VP Finance", SENIOR, 5, 45000, 50000),
        Position(6, "HQ Information Systems", MIDDLE, 2, 5000, 15000),
        Position(7, "HQ Marketing", MIDDLE, 4, 5000, 12000),
        Position(8, "HQ Human Resources", MIDDLE, 3, 5000, 10000),
        Position(9, "HQ Finance and Accounting", MIDDLE, 5, 5000, 15000),
        Position(11, "Store Manager", STORE_MGMT, 11, 10000, 20000),
        Position(12, "Store Assistant Manager", STORE_MGMT, 11, 6000, 10000),
        Position(13, "Store Shift Supervisor", STORE_MGMT, 11, 4000, 7000),
        Position(14, "Store Information Systems", FULL_TIME, 14, 3000, 6000),
        Position(15, "Store Permanent Checker", FULL_TIME, 15, 1500, 4000),
        Position(16, "Store Temporary Checker", TEMP, 16, 800, 2500),
        Position(17, "Store Permanent Stocker", FULL_TIME, 17, 1500, 4000),
        Position(18, "Store Temporary Stocker", TEMP, 18, 800, 2500),
        Position(19, "Store Permanent Butcher", FULL_TIME, 19, 3000, 6000),
    )
}

STORE_COUNT = 24  # FoodMart stores are 1..24; store 0 is headquarters
# How many of each store-level job every store gets (the manager is handled separately).
# 24 * (2 + 3 + 1 + 8 + 10 + 8 + 11 + 2) = 1080 store staff; 264 temporary stockers
# matches the count Drill's REST golden file shows for that title.
STORE_STAFFING: tuple[tuple[int, int], ...] = (
    (12, 2),
    (13, 3),
    (14, 1),
    (15, 8),
    (16, 10),
    (17, 8),
    (18, 11),
    (19, 2),
)
# Headquarters staff below the vice presidents, as (position_id, head count).
HQ_STAFFING: tuple[tuple[int, int], ...] = ((6, 12), (7, 10), (8, 9), (9, 10))
VP_COUNTRY_MANAGERS = 6  # Drill's golden GROUP BY shows six

# The rows Drill's documentation and tests print, in file order (employee 3 does not
# exist in Drill's sample, so the ids run 1, 2, 4, 5, ...). Values are as well known
# as they are; the names and positions of the first five are confirmed by Drill tests.
KNOWN_EMPLOYEES: tuple[dict[str, Any], ...] = tuple(
    dict(zip(EMPLOYEE_COLUMNS, row))
    for row in (
        (1, "Sheri Nowmer", "Sheri", "Nowmer", 1, "President", 0, 1, "1961-08-26",
         "1994-12-01 00:00:00.0", 80000.0, 0, "Graduate Degree", "S", "F", SENIOR),
        (2, "Derrick Whelply", "Derrick", "Whelply", 2, "VP Country Manager", 0, 1, "1915-07-03",
         "1994-12-01 00:00:00.0", 40000.0, 1, "Graduate Degree", "M", "M", SENIOR),
        (4, "Michael Spence", "Michael", "Spence", 2, "VP Country Manager", 0, 1, "1969-06-20",
         "1998-01-01 00:00:00.0", 40000.0, 1, "Graduate Degree", "S", "M", SENIOR),
        (5, "Maya Gutierrez", "Maya", "Gutierrez", 2, "VP Country Manager", 0, 1, "1951-05-10",
         "1998-01-01 00:00:00.0", 35000.0, 1, "Bachelors Degree", "M", "F", SENIOR),
        (6, "Roberta Damstra", "Roberta", "Damstra", 3, "VP Information Systems", 0, 2,
         "1942-10-08", "1994-12-01 00:00:00.0", 25000.0, 1, "Bachelors Degree", "M", "F",
         SENIOR),
        (7, "Rebecca Kanagaki", "Rebecca", "Kanagaki", 4, "VP Human Resources", 0, 3,
         "1949-03-27", "1994-12-01 00:00:00.0", 15000.0, 1, "Bachelors Degree", "M", "F",
         SENIOR),
        (8, "Kim Brunner", "Kim", "Brunner", 11, "Store Manager", 9, 11, "1922-08-10",
         "1998-01-01 00:00:00.0", 10000.0, 5, "Bachelors Degree", "S", "F", STORE_MGMT),
        (9, "Brenda Blumberg", "Brenda", "Blumberg", 11, "Store Manager", 21, 11, "1979-06-23",
         "1998-01-01 00:00:00.0", 17000.0, 5, "Graduate Degree", "M", "F", STORE_MGMT),
        (10, "Darren Stanz", "Darren", "Stanz", 5, "VP Finance", 0, 5, "1949-08-26",
         "1994-12-01 00:00:00.0", 50000.0, 1, "Partial College", "M", "M", SENIOR),
        (11, "Jonathan Murraiin", "Jonathan", "Murraiin", 11, "Store Manager", 1, 11,
         "1967-06-20", "1998-01-01 00:00:00.0", 15000.0, 5, "Graduate Degree", "S", "M",
         STORE_MGMT),
    )
)  # fmt: skip

FEMALE_NAMES: tuple[str, ...] = (
    "Alice", "Amy", "Angela", "Anne", "Barbara", "Beverly", "Bonnie", "Carla", "Carol",
    "Cheryl", "Christine", "Claudia", "Cynthia", "Diane", "Donna", "Dorothy", "Elizabeth",
    "Ellen", "Emily", "Gail", "Gloria", "Helen", "Irene", "Jacqueline", "Janet", "Jean",
    "Joan", "Joyce", "Judy", "Julia", "Karen", "Kathleen", "Kristine", "Laura", "Laurie",
    "Linda", "Lois", "Lori", "Marie", "Martha", "Mary", "Melissa", "Nancy", "Norma",
    "Pamela", "Patricia", "Paula", "Rachel", "Rosa", "Ruth", "Sandra", "Sarah", "Sharon",
    "Shirley", "Susan", "Teresa", "Theresa", "Virginia", "Wanda", "Yolanda",
)  # fmt: skip
MALE_NAMES: tuple[str, ...] = (
    "Adam", "Albert", "Alfred", "Andrew", "Arthur", "Benjamin", "Bruce", "Carl", "Charles",
    "Christopher", "Daniel", "David", "Dennis", "Donald", "Douglas", "Edward", "Eric",
    "Eugene", "Frank", "Fred", "Gary", "George", "Gerald", "Gregory", "Harold", "Harry",
    "Henry", "Howard", "Jack", "James", "Jeffrey", "Jerry", "John", "Jose", "Joseph",
    "Kenneth", "Lawrence", "Leopoldo", "Louis", "Mark", "Martin", "Matthew", "Nicholas",
    "Patrick", "Paul", "Pedro", "Peter", "Philip", "Ralph", "Raymond", "Richard", "Robert",
    "Roger", "Ronald", "Roy", "Samuel", "Scott", "Stephen", "Thomas", "Walter", "William",
)  # fmt: skip
LAST_NAMES: tuple[str, ...] = (
    "Adair", "Aldred", "Alvarez", "Anderson", "Baker", "Barnes", "Bell", "Bernard",
    "Brockett", "Brooks", "Bruno", "Burke", "Campbell", "Carter", "Castillo", "Chavez",
    "Cleary", "Collins", "Conley", "Cook", "Cooper", "Cruz", "Davis", "Diaz", "Dixon",
    "Edwards", "Ellis", "Evans", "Fisher", "Flores", "Ford", "Foster", "Garcia", "Gibson",
    "Gomez", "Graham", "Gras", "Gray", "Green", "Griffin", "Hall", "Hamilton", "Hapke",
    "Harris", "Hayes", "Henderson", "Hernandez", "Hill", "Howard", "Hughes", "Hunt",
    "Jackson", "James", "Jenkins", "Johnson", "Jones", "Jordan", "Kelly", "Kennedy", "King",
    "Lee", "Lewis", "Long", "Lopez", "Macaluso", "Marshall", "Martin", "Martinez", "Mason",
    "Mccoy", "Meyer", "Miller", "Mitchell", "Moore", "Morales", "Morgan", "Murphy", "Myers",
    "Nelson", "Nickell", "Ortiz", "Owens", "Parker", "Patterson", "Perez", "Perry",
    "Peterson", "Phillips", "Powell", "Price", "Ramirez", "Reed", "Renfro", "Reyes",
    "Reynolds", "Richmeier", "Rivera", "Roberts", "Robinson", "Rodriguez", "Rogers", "Ross",
    "Russell", "Sanchez", "Sanders", "Scott", "Simmons", "Smith", "Stewart", "Suggs",
    "Sullivan", "Tays", "Taylor", "Thomas", "Thompson", "Thorton", "Torres", "Tuck",
    "Turner", "Wallace", "Wallin", "Walker", "Ward", "Warren", "Washington", "Watson",
    "White", "Williams", "Wilson", "Wood", "Wright", "Wyllie", "Wyro", "Young", "Zeller",
    "Zubaty",
)  # fmt: skip

# (label, weight): roughly the spread of FoodMart's staff.
EDUCATION_LEVELS: tuple[tuple[str, int], ...] = (
    ("Graduate Degree", 10),
    ("Bachelors Degree", 25),
    ("Partial College", 15),
    ("High School Degree", 30),
    ("Partial High School", 20),
)


def _weighted(rng: random.Random, choices: Sequence[tuple[str, int]]) -> str:
    labels = [label for label, _ in choices]
    weights = [weight for _, weight in choices]
    return rng.choices(labels, weights=weights, k=1)[0]


def _random_day(rng: random.Random, first: date, last: date) -> date:
    return first + timedelta(days=rng.randrange((last - first).days + 1))


class _EmployeeFactory:
    """Hands out ids and unique names, and builds one row per hire."""

    def __init__(self, rng: random.Random, taken_names: Iterable[str]) -> None:
        self.rng = rng
        self.names = set(taken_names)
        self.next_id = 12  # the known rows use 1..11 (without 3)

    def _name(self) -> tuple[str, str, str]:
        while True:
            gender = self.rng.choice("FM")
            first = self.rng.choice(FEMALE_NAMES if gender == "F" else MALE_NAMES)
            last = self.rng.choice(LAST_NAMES)
            if f"{first} {last}" not in self.names:
                self.names.add(f"{first} {last}")
                return gender, first, last

    def hire(self, position_id: int, store_id: int, supervisor_id: int) -> dict[str, Any]:
        rng = self.rng
        position = POSITIONS[position_id]
        gender, first, last = self._name()
        birth = _random_day(rng, date(1910, 1, 1), date(1980, 12, 31))
        hire = _random_day(rng, date(1994, 12, 1), date(1998, 12, 31))
        salary = rng.randrange(position.min_salary, position.max_salary + 1, 100)
        row = {
            "employee_id": self.next_id,
            "full_name": f"{first} {last}",
            "first_name": first,
            "last_name": last,
            "position_id": position.position_id,
            "position_title": position.title,
            "store_id": store_id,
            "department_id": position.department_id,
            "birth_date": birth.isoformat(),
            "hire_date": f"{hire.isoformat()} 00:00:00.0",
            "salary": float(salary),
            "supervisor_id": supervisor_id,
            "education_level": _weighted(rng, EDUCATION_LEVELS),
            "marital_status": rng.choice("SM"),
            "gender": gender,
            "management_role": position.role,
        }
        self.next_id += 1
        return row


def build_employees(seed: int = SEED) -> list[dict[str, Any]]:
    """Build the employee rows: the known head of the company, then generated staff.

    The hierarchy is consistent: vice presidents report to the president, store managers
    to a country manager, assistant managers to their store's manager, shift supervisors
    to an assistant manager and the other store staff to a shift supervisor of their store.
    """
    rng = random.Random(seed)
    rows = [dict(row) for row in KNOWN_EMPLOYEES]
    factory = _EmployeeFactory(rng, (row["full_name"] for row in rows))

    # Headquarters: the missing country managers, then staff under their department's VP.
    country_managers = [row["employee_id"] for row in rows if row["position_id"] == 2]
    while len(country_managers) < VP_COUNTRY_MANAGERS:
        row = factory.hire(2, 0, 1)
        rows.append(row)
        country_managers.append(row["employee_id"])
    vp_of_department = {
        row["department_id"]: row["employee_id"] for row in rows if row["position_id"] in (3, 4, 5)
    }
    vp_of_department[4] = 1  # marketing has no VP of its own; it reports to the president
    for position_id, count in HQ_STAFFING:
        supervisor = vp_of_department[POSITIONS[position_id].department_id]
        rows.extend(factory.hire(position_id, 0, supervisor) for _ in range(count))

    # Every store gets a manager (three of them are among the known rows).
    managers = {row["store_id"]: row["employee_id"] for row in rows if row["position_id"] == 11}
    for store_id in range(1, STORE_COUNT + 1):
        if store_id not in managers:
            row = factory.hire(11, store_id, rng.choice(country_managers))
            rows.append(row)
            managers[store_id] = row["employee_id"]

    # Store staff, one store at a time, bosses before the people who report to them.
    for store_id in range(1, STORE_COUNT + 1):
        bosses: dict[int, list[int]] = {11: [managers[store_id]]}
        for position_id, count in STORE_STAFFING:
            boss_position = {12: 11, 13: 12}.get(position_id, 13)
            hired = [
                factory.hire(position_id, store_id, rng.choice(bosses[boss_position]))
                for _ in range(count)
            ]
            bosses[position_id] = [row["employee_id"] for row in hired]
            rows.extend(hired)

    if len(rows) != EMPLOYEE_COUNT:
        raise AssertionError(f"built {len(rows)} employees, expected {EMPLOYEE_COUNT}")
    return rows


# --------------------------------------------------------------------------- regions

# (sales_district, sales_district_id, state/province, sales_region, country, cities).
# Shaped after Drill's region.json: 110 rows, 109 distinct cities (one city name occurs
# in two countries), 13 states, 23 districts, 8 regions and 4 countries, counting the
# "None" row. Sorted CA cities start with Altadena, Arcadia, as a Drill test expects.
SALES_DISTRICTS: tuple[tuple[str, int, str, str, str, tuple[str, ...]], ...] = (
    ("San Francisco", 123, "CA", "Central West", "USA",
     ("San Francisco", "Oakland", "Berkeley", "Richmond", "San Mateo", "Palo Alto",
      "Daly City", "Novato")),
    ("Sacramento", 124, "CA", "Central West", "USA",
     ("Sacramento", "Davis", "Woodland", "Roseville")),
    ("Los Angeles", 125, "CA", "South West", "USA",
     ("Los Angeles", "Altadena", "Arcadia", "Beverly Hills", "Burbank", "Glendale",
      "Long Beach", "Pasadena", "Santa Monica", "West Covina")),
    ("San Diego", 126, "CA", "South West", "USA",
     ("San Diego", "Chula Vista", "Coronado", "El Cajon", "Escondido", "La Jolla",
      "Oceanside", "Spring Valley")),
    ("Portland", 127, "OR", "North West", "USA",
     ("Portland", "Beaverton", "Gresham", "Hillsboro", "Lake Oswego", "Oregon City",
      "Tigard")),
    ("Salem", 128, "OR", "North West", "USA",
     ("Salem", "Albany", "Corvallis", "Lebanon", "Woodburn")),
    ("Seattle", 129, "WA", "North West", "USA",
     ("Seattle", "Ballard", "Burien", "Issaquah", "Kirkland", "Redmond", "Renton")),
    ("Spokane", 130, "WA", "North West", "USA", ("Spokane", "Cheney", "Colville", "Pullman")),
    ("Bellingham", 131, "WA", "North West", "USA",
     ("Bellingham", "Anacortes", "Burlington", "Ferndale", "Mount Vernon", "Sedro Woolley")),
    ("Bremerton", 132, "WA", "North West", "USA",
     ("Bremerton", "Port Orchard", "Poulsbo", "Silverdale", "Port Townsend")),
    ("Tacoma", 133, "WA", "North West", "USA",
     ("Tacoma", "Olympia", "Puyallup", "Lacey", "Steilacoom")),
    ("Yakima", 134, "WA", "North West", "USA",
     ("Yakima", "Ellensburg", "Walla Walla", "Kennewick", "Sunnyside")),
    ("Vancouver", 135, "BC", "Canada West", "Canada",
     ("Vancouver", "Burnaby", "Richmond", "Surrey", "Langley", "Coquitlam")),
    ("Victoria", 136, "BC", "Canada West", "Canada", ("Victoria", "Nanaimo", "Sooke", "Cliffside")),
    ("Mexico City", 137, "DF", "Mexico Central", "Mexico",
     ("Mexico City", "San Andres", "Santa Fe", "Tlalpan")),
    ("Guadalajara", 138, "Jalisco", "Mexico Central", "Mexico",
     ("Guadalajara", "Zapopan", "Tlaquepaque")),
    ("Camacho", 139, "Zacatecas", "Mexico Central", "Mexico",
     ("Camacho", "Zacatecas", "Fresnillo")),
    ("Culiacan", 140, "Sinaloa", "Mexico West", "Mexico", ("Culiacan", "Mazatlan", "Los Mochis")),
    ("Tijuana", 141, "Baja California", "Mexico West", "Mexico",
     ("Tijuana", "Ensenada", "Mexicali")),
    ("Acapulco", 142, "Guerrero", "Mexico South", "Mexico", ("Acapulco", "Chilpancingo", "Iguala")),
    ("Veracruz", 143, "Veracruz", "Mexico South", "Mexico", ("Veracruz", "Orizaba", "Xalapa")),
    ("Merida", 144, "Yucatan", "Mexico South", "Mexico", ("Merida", "Valladolid", "Progreso")),
)  # fmt: skip
REGION_COUNT = 110


def build_regions() -> list[dict[str, Any]]:
    """Build the region rows: region 0 is the "None" placeholder, then one row per city."""
    rows: list[dict[str, Any]] = [
        dict(zip(REGION_COLUMNS, (0, "None", "None", "No District", "No Region", "No Country", 0)))
    ]
    for district, district_id, state, region, country, cities in SALES_DISTRICTS:
        for city in cities:
            values = (len(rows), city, state, district, region, country, district_id)
            rows.append(dict(zip(REGION_COLUMNS, values)))
    if len(rows) != REGION_COUNT:
        raise AssertionError(f"built {len(rows)} regions, expected {REGION_COUNT}")
    return rows


# --------------------------------------------------------------------------- TPC-H

TPCH_REGIONS: tuple[str, ...] = ("AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST")
# (n_name, n_regionkey) in n_nationkey order, as fixed by the TPC-H specification.
TPCH_NATIONS: tuple[tuple[str, int], ...] = (
    ("ALGERIA", 0), ("ARGENTINA", 1), ("BRAZIL", 1), ("CANADA", 1), ("EGYPT", 4),
    ("ETHIOPIA", 0), ("FRANCE", 3), ("GERMANY", 3), ("INDIA", 2), ("INDONESIA", 2),
    ("IRAN", 4), ("IRAQ", 4), ("JAPAN", 2), ("JORDAN", 4), ("KENYA", 0), ("MOROCCO", 0),
    ("MOZAMBIQUE", 0), ("PERU", 1), ("CHINA", 2), ("ROMANIA", 3), ("SAUDI ARABIA", 4),
    ("VIETNAM", 2), ("RUSSIA", 3), ("UNITED KINGDOM", 3), ("UNITED STATES", 1),
)  # fmt: skip

NATION_SCHEMA = pa.schema(
    [
        pa.field("n_nationkey", pa.int32()),
        pa.field("n_name", pa.string()),
        pa.field("n_regionkey", pa.int32()),
        pa.field("n_comment", pa.string()),
    ]
)
REGION_SCHEMA = pa.schema(
    [
        pa.field("r_regionkey", pa.int32()),
        pa.field("r_name", pa.string()),
        pa.field("r_comment", pa.string()),
    ]
)


def build_nation_table() -> pa.Table:
    """The 25 TPC-H nations; comments are short fixed text, not dbgen's random words."""
    keys = list(range(len(TPCH_NATIONS)))
    names = [name for name, _ in TPCH_NATIONS]
    regions = [region for _, region in TPCH_NATIONS]
    comments = [
        f"nation {name.lower()} of region {TPCH_REGIONS[region].lower()}"
        for name, region in TPCH_NATIONS
    ]
    return pa.table([keys, names, regions, comments], schema=NATION_SCHEMA)


def build_region_table() -> pa.Table:
    """The five TPC-H regions, with short fixed comments."""
    counts = [sum(1 for _, r in TPCH_NATIONS if r == key) for key in range(len(TPCH_REGIONS))]
    comments = [
        f"region {name.lower()} with {count} nations" for name, count in zip(TPCH_REGIONS, counts)
    ]
    return pa.table(
        [list(range(len(TPCH_REGIONS))), list(TPCH_REGIONS), comments], schema=REGION_SCHEMA
    )


# --------------------------------------------------------------------------- writing


def write_json_lines(rows: Iterable[dict[str, Any]], path: Path) -> None:
    """Write one compact JSON object per line, keys in insertion order, like Drill's files."""
    text = "".join(json.dumps(row, separators=(",", ":")) + "\n" for row in rows)
    path.write_bytes(text.encode("utf-8"))


def write_parquet(table: pa.Table, path: Path) -> None:
    """Write a Parquet file whose bytes depend only on the data and the pyarrow version.

    pyarrow puts no timestamp in the file; the footer's ``created_by`` names the
    pyarrow version, so files written by another version differ in those bytes only.
    Settings are spelled out so that a change of pyarrow defaults does not move them.
    """
    pq.write_table(
        table,
        path,
        version="2.6",
        compression="snappy",
        use_dictionary=False,
        write_statistics=True,
        data_page_version="1.0",
        store_schema=True,
        write_page_index=False,
    )


def write_all(target: Path) -> list[Path]:
    """Write every sample file under ``target`` and return their paths."""
    target.mkdir(parents=True, exist_ok=True)
    (target / "tpch").mkdir(exist_ok=True)
    outputs = [
        target / "employee.json",
        target / "region.json",
        target / "tpch" / "nation.parquet",
        target / "tpch" / "region.parquet",
    ]
    write_json_lines(build_employees(), outputs[0])
    write_json_lines(build_regions(), outputs[1])
    write_parquet(build_nation_table(), outputs[2])
    write_parquet(build_region_table(), outputs[3])
    return outputs


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry: write the sample files and print their sizes."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "target",
        nargs="?",
        type=Path,
        default=DEFAULT_TARGET,
        help=f"directory to write into (default: {DEFAULT_TARGET})",
    )
    args = parser.parse_args(argv)
    for path in write_all(args.target):
        print(f"{path.stat().st_size:>8}  {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
