"""Agent names: the only identities AgentsNet agents have.

The reference code draws them without replacement from 200 common US first names (100 male, then 100
female; ssa.gov). For more than 200 agents hivebench extends the list, documented in its README.md: the
k-th pass over the list appends k + 1 to every name (James, ..., Tiffany, James2, ..., Tiffany2,
James3, ...), so names stay unique and readable at any population.
"""

from __future__ import annotations

NAMES = (
    "James", "Michael", "Robert", "John", "David", "William", "Richard", "Joseph", "Thomas", "Christopher",
    "Charles", "Daniel", "Matthew", "Anthony", "Mark", "Donald", "Steven", "Andrew", "Paul", "Joshua",
    "Kenneth", "Kevin", "Brian", "Timothy", "Ronald", "George", "Jason", "Edward", "Jeffrey", "Ryan",
    "Jacob", "Nicholas", "Gary", "Eric", "Jonathan", "Stephen", "Larry", "Justin", "Scott", "Brandon",
    "Benjamin", "Samuel", "Gregory", "Alexander", "Patrick", "Frank", "Raymond", "Jack", "Dennis", "Jerry",
    "Tyler", "Aaron", "Jose", "Adam", "Nathan", "Henry", "Zachary", "Douglas", "Peter", "Kyle",
    "Noah", "Ethan", "Jeremy", "Christian", "Walter", "Keith", "Austin", "Roger", "Terry", "Sean",
    "Gerald", "Carl", "Dylan", "Harold", "Jordan", "Jesse", "Bryan", "Lawrence", "Arthur", "Gabriel",
    "Bruce", "Logan", "Billy", "Joe", "Alan", "Juan", "Elijah", "Willie", "Albert", "Wayne",
    "Randy", "Mason", "Vincent", "Liam", "Roy", "Bobby", "Caleb", "Bradley", "Russell", "Lucas",
    "Mary", "Patricia", "Jennifer", "Linda", "Elizabeth", "Barbara", "Susan", "Jessica", "Karen", "Sarah",
    "Lisa", "Nancy", "Sandra", "Betty", "Ashley", "Emily", "Kimberly", "Margaret", "Donna", "Michelle",
    "Carol", "Amanda", "Melissa", "Deborah", "Stephanie", "Rebecca", "Sharon", "Laura", "Cynthia", "Dorothy",
    "Amy", "Kathleen", "Angela", "Shirley", "Emma", "Brenda", "Pamela", "Nicole", "Anna", "Samantha",
    "Katherine", "Christine", "Debra", "Rachel", "Carolyn", "Janet", "Maria", "Olivia", "Heather", "Helen",
    "Catherine", "Diane", "Julie", "Victoria", "Joyce", "Lauren", "Kelly", "Christina", "Ruth", "Joan",
    "Virginia", "Judith", "Evelyn", "Hannah", "Andrea", "Megan", "Cheryl", "Jacqueline", "Madison", "Teresa",
    "Abigail", "Sophia", "Martha", "Sara", "Gloria", "Janice", "Kathryn", "Ann", "Isabella", "Judy",
    "Charlotte", "Julia", "Grace", "Amber", "Alice", "Jean", "Denise", "Frances", "Danielle", "Marilyn",
    "Natalie", "Beverly", "Diana", "Brittany", "Theresa", "Kayla", "Alexis", "Doris", "Lori", "Tiffany",
)


def name_pool(n: int) -> list[str]:
    """The first max(n, 200) names of the extended list: the pool n names are drawn from."""
    size = max(n, len(NAMES))
    return [NAMES[i % len(NAMES)] + ("" if i < len(NAMES) else str(i // len(NAMES) + 1)) for i in range(size)]


def longest_name(n: int) -> int:
    """The characters of the longest name in `name_pool(n)`: suffixes only grow, so it is in one of
    the last two passes over the list (the last may hold only its first few names)."""
    size = max(n, len(NAMES))
    last = (size - 1) // len(NAMES)

    def longest_in(k: int) -> int:
        count = min(len(NAMES), size - k * len(NAMES))
        return max(map(len, NAMES[:count])) + (len(str(k + 1)) if k else 0)

    return max(longest_in(k) for k in {max(last - 1, 0), last})
