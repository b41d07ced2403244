// Renders parsed statements with Jinja2's scoping: a name set inside a for loop lives for that
// iteration only (each iteration starts from the names outside), if blocks share their scope,
// a macro runs in a scope of its own above the one it was defined in, and a namespace is the
// one object a loop can change for the code after it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/nodes.h"

namespace canrun::jinja {

class Interpreter {
 public:
  // `variables`: the names the template sees, globals and the render's arguments.
  explicit Interpreter(std::vector<std::pair<std::string, Value>> variables);

  void render(const Body& body, std::string& out);

  Value lookup(const std::string& name) const;
  void assign(const std::string& name, Value value);
  Value call(const Value& callee, Arguments& arguments, int line);
  Arguments evaluate(const CallArguments& arguments);
  [[noreturn]] void fail(int line, const std::string& message) const;

  // for loops and macros open a scope above `parent` and close it when they are done.
  struct Scope {
    std::vector<std::pair<std::string, Value>> names;
    std::shared_ptr<Scope> parent;
  };
  std::shared_ptr<Scope> scope() const { return scope_; }
  class Opened {
   public:
    Opened(Interpreter& in, std::shared_ptr<Scope> parent);
    ~Opened();
    Opened(const Opened&) = delete;
    Opened& operator=(const Opened&) = delete;

   private:
    Interpreter& in_;
    std::shared_ptr<Scope> saved_;
  };

  // A template comes with a checkpoint, so a hostile one could loop without end; a render stops
  // with an error past this bound, far above what a chat template needs. What it builds, its
  // output included, is bounded by jinja/bounds.h.
  static constexpr int64_t kMaxLoopIterations = 10'000'000;
  // Counts one loop iteration; throws past kMaxLoopIterations.
  void count_iteration(int line);

  enum class Flow { kNormal, kBreak, kContinue };
  Flow flow = Flow::kNormal;
  int loop_depth = 0;
  int macro_depth = 0;  // macros calling macros; bounded so a runaway recursion is an error, not a crash

 private:
  std::shared_ptr<Scope> scope_;
  int64_t loop_iterations_ = 0;
};

}  // namespace canrun::jinja
