"""The grading kit behind the `grade` command.

从零构建 GPT 课程的练习与评分工具包：学生填写 exercises/ 里的存根，`grade ex03` 逐项检查。
"""

__version__ = "0.1.0"
