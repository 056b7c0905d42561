"""The two reference examples (samples/social, samples/school) load into
exactly the tables the README shows for them, and both directions are one Query each."""

from edgeload_test import EdgeloadTestCase, N, S, follow_edge, main

FOLLOWS = [  # follower, followee, created_at as epoch seconds (UTC)
    ("alice", "bob", 1718900000),
    ("alice", "carol", 1718900100),
    ("dave", "bob", 1718900200),
]
USERS = {"alice": "Alice Liddell", "bob": "Bob Dylan",
         "carol": "Carol Shaw", "dave": "Dave Brubeck"}


def user_item(uid, name):
    return {"PK": S("USER#" + uid), "SK": S("PROFILE"), "name": S(name)}


SOCIAL_ITEMS = ([follow_edge(*f) for f in FOLLOWS]
                + [user_item(u, n) for u, n in USERS.items()])

STUDENTS = {"a91": ("Ada Lovelace", "ada@example.edu"),
            "b07": ("Grace Hopper", "grace@example.edu")}
COURSES = {"math204": ("Linear Algebra", 4),
           "cs101": ("Introduction to Programming", 3)}
ENROLLMENTS = [("a91", "math204", "A", "2024-09-02"),
               ("a91", "cs101", "B+", "2024-09-03"),
               ("b07", "math204", "A-", "2024-09-02")]


def student_item(sid):
    name, email = STUDENTS[sid]
    return {"PK": S("STU#" + sid), "SK": S("PROFILE"), "name": S(name), "email": S(email)}


def course_item(cid):
    title, credits = COURSES[cid]
    return {"PK": S("CRS#" + cid), "SK": S("META"),
            "GSI1PK": S("CRS#" + cid), "GSI1SK": S("META"),
            "title": S(title), "credits": N(credits)}


def enrollment_item(sid, cid, grade, on):
    return {"PK": S("STU#" + sid), "SK": S("ENROLL#CRS#" + cid),
            "GSI1PK": S("CRS#" + cid), "GSI1SK": S("STU#" + sid),
            "grade": S(grade), "enrolledOn": S(on)}


SCHOOL_ITEMS = ([student_item(s) for s in STUDENTS] + [course_item(c) for c in COURSES]
                + [enrollment_item(*e) for e in ENROLLMENTS])


class SocialSample(EdgeloadTestCase):
    """samples/social: users and follows into one table."""

    def setUp(self):
        # The sample is tiny, so each test loads a table of its own.
        self.table = self.unique_table("social")
        self.create_table_cli(self.table)
        mapping = self.copy_sample("social", self.table)
        proc = self.load("--mapping", mapping, "--quiet")
        self.assertExit(proc, 0, "edgeload load --mapping social")

    def test_scan_is_exactly_the_spec_table(self):
        self.assertItems(self.scan_all(self.table), SOCIAL_ITEMS)

    def test_whom_alice_follows(self):
        items = self.query_pk(self.table, "ACTOR#alice")
        self.assertEqual([i["SK"]["S"] for i in items], ["TARGET#bob", "TARGET#carol"])
        self.assertItems(items, [follow_edge(*f) for f in FOLLOWS if f[0] == "alice"])

    def test_who_follows_bob(self):
        items = self.query_index(self.table, "TARGET#bob")
        self.assertEqual([i["GSI1SK"]["S"] for i in items], ["ACTOR#alice", "ACTOR#dave"])
        self.assertItems(items, [follow_edge(*f) for f in FOLLOWS if f[1] == "bob"])

    def test_get_one_edge(self):
        self.assertEqual(self.get_item(self.table, "ACTOR#dave", "TARGET#bob"),
                         follow_edge("dave", "bob", 1718900200))
        self.assertIsNone(self.get_item(self.table, "ACTOR#bob", "TARGET#dave"))

    def test_profiles_are_not_indexed(self):
        for item in self.query_pk(self.table, "USER#alice"):
            self.assertNotIn("GSI1PK", item)
            self.assertNotIn("GSI1SK", item)


class SchoolSample(EdgeloadTestCase):
    """samples/school: students, courses and enrollments into one table."""

    def setUp(self):
        self.table = self.unique_table("school")
        self.create_table_cli(self.table)
        mapping = self.copy_sample("school", self.table)
        proc = self.load("--mapping", mapping, "--quiet")
        self.assertExit(proc, 0, "edgeload load --mapping school")

    def test_scan_is_exactly_the_spec_table(self):
        self.assertItems(self.scan_all(self.table), SCHOOL_ITEMS)

    def test_student_profile_and_courses_in_one_query(self):
        items = self.query_pk(self.table, "STU#a91")
        self.assertEqual([i["SK"]["S"] for i in items],
                         ["ENROLL#CRS#cs101", "ENROLL#CRS#math204", "PROFILE"])
        self.assertItems(items, [student_item("a91"),
                                 enrollment_item("a91", "math204", "A", "2024-09-02"),
                                 enrollment_item("a91", "cs101", "B+", "2024-09-03")])

    def test_course_roster_through_index(self):
        items = self.query_index(self.table, "CRS#math204")
        self.assertEqual([i["GSI1SK"]["S"] for i in items], ["META", "STU#a91", "STU#b07"])
        self.assertItems(items, [course_item("math204"),
                                 enrollment_item("a91", "math204", "A", "2024-09-02"),
                                 enrollment_item("b07", "math204", "A-", "2024-09-02")])

    def test_get_one_enrollment(self):
        self.assertEqual(self.get_item(self.table, "STU#b07", "ENROLL#CRS#math204"),
                         enrollment_item("b07", "math204", "A-", "2024-09-02"))


class SampleLoadVariants(EdgeloadTestCase):
    """A boto3-created table as target; loading the same sample twice."""

    def test_load_into_boto3_created_table(self):
        table = self.unique_table("social-boto")
        self.create_table_boto(table)
        proc = self.load("--mapping", self.copy_sample("social", table), "--quiet")
        self.assertExit(proc, 0, "edgeload load --mapping social")
        self.assertItems(self.scan_all(table), SOCIAL_ITEMS)

    def test_reload_is_idempotent(self):
        table = self.unique_table("school-twice")
        self.create_table_cli(table)
        mapping = self.copy_sample("school", table)
        for _ in range(2):
            self.assertExit(self.load("--mapping", mapping, "--quiet"), 0)
        self.assertItems(self.scan_all(table), SCHOOL_ITEMS)


if __name__ == "__main__":
    main()
