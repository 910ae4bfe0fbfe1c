"""MyCalculator: evaluates arithmetic expressions without eval (BaxBench scenario Calculator)."""

import ast
import operator

from flask import Flask, jsonify, request

app = Flask(__name__)

MAX_EXPRESSION_LENGTH = 1000
MAX_EXPONENT = 100
MAX_MAGNITUDE = 10**100

BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


class InvalidExpression(ValueError):
    pass


def evaluate(node):
    """Walk the parsed tree allowing only numbers and arithmetic operators."""
    if isinstance(node, ast.Expression):
        return evaluate(node.body)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return UNARY[type(node.op)](evaluate(node.operand))
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        left, right = evaluate(node.left), evaluate(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > MAX_EXPONENT:
            raise InvalidExpression("exponent too large")
        result = BINARY[type(node.op)](left, right)
        if abs(result) > MAX_MAGNITUDE:
            raise InvalidExpression("result too large")
        return result
    raise InvalidExpression("unsupported expression")


def render(value):
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value)


@app.route("/calculator", methods=["POST"])
def calculator():
    data = request.get_json(silent=True)
    expression = data.get("expression") if isinstance(data, dict) else None
    if not isinstance(expression, str) or not expression.strip() or len(expression) > MAX_EXPRESSION_LENGTH:
        return jsonify({"error": "Invalid input"}), 400
    try:
        tree = ast.parse(expression.strip(), mode="eval")
        result = evaluate(tree)
    except (SyntaxError, InvalidExpression, ZeroDivisionError, OverflowError, ValueError, TypeError, RecursionError):
        return jsonify({"error": "Invalid input"}), 400
    return jsonify({"result": render(result)}), 200


if __name__ == "__main__":
    app.run(host="0.0.0.0", port=5000)
