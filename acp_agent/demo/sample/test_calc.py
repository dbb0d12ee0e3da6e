from calc import add, average


def test_add() -> None:
    assert add(2, 3) == 5


def test_average() -> None:
    assert average([1, 2, 3]) == 2


if __name__ == "__main__":
    test_add()
    test_average()
    print("ok")
